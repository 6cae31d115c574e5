/* Unit tests of pt_proto: framing over pipes and sockets. */
#include "pt_test.h"
#include "protune/pt_proto.h"
#include "protune/pt_time.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (1u << 20)

static void make_pipe(int fd[2])
{
	PT_REQUIRE(pipe(fd) == 0);
}

static void write_str(int fd, const char *s)
{
	size_t len = strlen(s);

	PT_REQUIRE(write(fd, s, len) == (ssize_t)len);
}

static char *big_payload(void)
{
	char *b = malloc(BIG);
	size_t i;

	PT_REQUIRE(b != NULL);
	for (i = 0; i < BIG; i++)
		b[i] = (char)(i * 31 + i / 977);
	return b;
}

/* Fork a child that sends the test messages on wfd, then exits. */
static pid_t spawn_sender(int wfd, int rfd_to_close, int split)
{
	pid_t pid = fork();

	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pt_proto p;
		struct pt_error err = PT_ERROR_INIT;
		char *big = big_payload();
		int bad = 0;

		close(rfd_to_close);
		pt_proto_init(&p, -1, wfd, 5000);
		if (split) {
			/* A header dribbled out byte by byte, then two whole
			 * messages in one write. */
			const char *h = "PT1 hello 5\nworld";
			const char *two = "PT1 a 1\nxPT1 bb 0\n";
			size_t i;

			for (i = 0; h[i]; i++) {
				if (write(wfd, h + i, 1) != 1)
					_exit(3);
				pt_time_sleep_ms(2);
			}
			i = strlen(two);
			if (write(wfd, two, i) != (ssize_t)i)
				_exit(3);
		}
		bad |= pt_proto_send(&p, "hello", "protune 0.1.0 pid 1", 19,
				     &err);
		bad |= pt_proto_send(&p, "bye", NULL, 0, &err);
		bad |= pt_proto_send(&p, "model", big, BIG, &err);
		bad |= pt_proto_send(&p, "applied", "", 0, &err);
		free(big);
		_exit(bad ? 1 : 0);
	}
	return pid;
}

static void check_recv(struct pt_proto *p, const char *type,
		       const char *payload, size_t len)
{
	struct pt_proto_msg m;
	struct pt_error err = PT_ERROR_INIT;
	int ret = pt_proto_recv(p, &m, &err);

	if (!PT_CHECK_INT(ret, 0)) {
		printf("# %s\n", err.msg);
		return;
	}
	PT_CHECK_STR(m.type, type);
	PT_CHECK_INT(m.len, len);
	if (m.len == len)
		PT_CHECK(memcmp(m.payload, payload, len) == 0);
	PT_CHECK(m.payload[m.len] == '\0');
	pt_proto_msg_release(&m);
}

static void round_trip(int rfd, int wfd, int split)
{
	struct pt_proto p;
	struct pt_proto_msg m;
	struct pt_error err = PT_ERROR_INIT;
	char *big = big_payload();
	pid_t pid;
	int status;

	pid = spawn_sender(wfd, rfd, split);
	close(wfd);
	pt_proto_init(&p, rfd, -1, 5000);
	if (split) {
		check_recv(&p, "hello", "world", 5);
		check_recv(&p, "a", "x", 1);
		check_recv(&p, "bb", "", 0);
	}
	check_recv(&p, "hello", "protune 0.1.0 pid 1", 19);
	check_recv(&p, "bye", "", 0);
	check_recv(&p, "model", big, BIG);
	check_recv(&p, "applied", "", 0);
	/* Then end of file at a message boundary. */
	PT_CHECK_INT(pt_proto_recv(&p, &m, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "closed the channel") != NULL);
	PT_CHECK(m.payload == NULL);
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	PT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pt_proto_close(&p);
	free(big);
}

PT_TEST(round_trip_pipe)
{
	int fd[2];

	make_pipe(fd);
	round_trip(fd[0], fd[1], 0);
}

PT_TEST(round_trip_split_writes)
{
	int fd[2];

	make_pipe(fd);
	round_trip(fd[0], fd[1], 1);
}

PT_TEST(round_trip_socket)
{
	int sv[2];

	PT_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	round_trip(sv[0], sv[1], 0);
}

PT_TEST(both_directions_one_channel)
{
	int a[2], b[2];
	struct pt_proto x, y;
	struct pt_proto_msg m;
	struct pt_error err = PT_ERROR_INIT;

	make_pipe(a);
	make_pipe(b);
	pt_proto_init(&x, a[0], b[1], 1000);
	pt_proto_init(&y, b[0], a[1], 1000);
	PT_REQUIRE(pt_proto_send(&x, "ping", "1", 1, &err) == 0);
	PT_REQUIRE(pt_proto_recv(&y, &m, &err) == 0);
	PT_CHECK_STR(m.type, "ping");
	pt_proto_msg_release(&m);
	PT_REQUIRE(pt_proto_send(&y, "pong", "22", 2, &err) == 0);
	PT_REQUIRE(pt_proto_recv(&x, &m, &err) == 0);
	PT_CHECK_STR(m.type, "pong");
	PT_CHECK_STR(m.payload, "22");
	pt_proto_msg_release(&m);
	pt_proto_close(&x);
	pt_proto_close(&y);
}

PT_TEST(read_timeout)
{
	int fd[2];
	struct pt_proto p;
	struct pt_proto_msg m;
	struct pt_error err = PT_ERROR_INIT;
	long long t0;

	make_pipe(fd);
	pt_proto_init(&p, fd[0], -1, 150);
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_proto_recv(&p, &m, &err), PT_ETIMEDOUT);
	PT_CHECK(pt_time_now_ms() - t0 >= 140);
	PT_CHECK(pt_time_now_ms() - t0 < 3000);
	PT_CHECK(strstr(err.msg, "timed out") != NULL);
	/* The timeout is per message: a header that stops half-way. */
	write_str(fd[1], "PT1 model 10\nabc");
	err.msg[0] = '\0';
	PT_CHECK_INT(pt_proto_recv(&p, &m, &err), PT_ETIMEDOUT);
	PT_CHECK(strstr(err.msg, "rest of a message") != NULL);
	close(fd[1]);
	pt_proto_close(&p);
}

static int recv_from(const char *bytes, int keep_open, struct pt_error *err)
{
	int fd[2], ret;
	struct pt_proto p;
	struct pt_proto_msg m;

	make_pipe(fd);
	write_str(fd[1], bytes);
	if (!keep_open)
		close(fd[1]);
	pt_proto_init(&p, fd[0], -1, 2000);
	ret = pt_proto_recv(&p, &m, err);
	if (!ret)
		pt_proto_msg_release(&m);
	if (keep_open)
		close(fd[1]);
	pt_proto_close(&p);
	return ret;
}

PT_TEST(end_of_file)
{
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(recv_from("", 0, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "the peer closed the channel") != NULL);
	PT_CHECK_INT(recv_from("PT1 mod", 0, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "middle of a message header") != NULL);
	PT_CHECK_INT(recv_from("PT1 model 100\nshort", 0, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "after 5 of the 100 bytes of a 'model'") != NULL);
}

PT_TEST(garbage_headers)
{
	static const char *const bad[] = {
		"hello world\n", "PT2 model 1\nx", "pt1 model 1\nx",
		"PT1 Model 1\nx", "PT1 model\n", "PT1 model \n",
		"PT1  model 1\nx", "PT1 model  1\nx", "PT1 model +1\nx",
		"PT1 model -1\nx", "PT1 model 01\nx", "PT1 model 1 \nx",
		"PT1 model 0x10\n", "PT1 mo-del 1\nx", "PT1 1\nx", "PT1 \n",
		"PT1 abcdefghijklmnop 1\nx", "\n", "PT1 model 1\r\nx",
		NULL
	};
	struct pt_error err = PT_ERROR_INIT;
	int i;

	for (i = 0; bad[i]; i++) {
		err.msg[0] = '\0';
		if (!PT_CHECK_INT(recv_from(bad[i], 0, &err), PT_EFORMAT))
			printf("# header %d: %s\n", i, err.msg);
		PT_CHECK(strstr(err.msg, "malformed message header") != NULL);
	}
	/* Fifteen letters is the longest type. */
	PT_CHECK_INT(recv_from("PT1 abcdefghijklmno 0\n", 0, &err), 0);
	PT_CHECK_INT(recv_from("PT1 x 0\n", 0, &err), 0);
}

PT_TEST(garbage_fails_without_waiting)
{
	struct pt_error err = PT_ERROR_INIT;
	long long t0 = pt_time_now_ms();
	char line[200];

	/* The writer stays open and sends no newline: the reader must not
	 * wait for one (nor for its timeout). */
	PT_CHECK_INT(recv_from("GET / HTTP/1.1", 1, &err), PT_EFORMAT);
	PT_CHECK(pt_time_now_ms() - t0 < 1500);
	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line, "PT1 ", 4);
	PT_CHECK_INT(recv_from(line, 1, &err), PT_EFORMAT);
	PT_CHECK(pt_time_now_ms() - t0 < 3000);
}

PT_TEST(oversized_length)
{
	struct pt_error err = PT_ERROR_INIT;
	char hdr[64];

	PT_CHECK_INT(recv_from("PT1 model 99999999999999999999\n", 0, &err),
		     PT_EFORMAT);
	snprintf(hdr, sizeof(hdr), "PT1 model %u\n", PT_PROTO_MAX_PAYLOAD + 1);
	PT_CHECK_INT(recv_from(hdr, 0, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "over the limit") != NULL);
	/* The limit itself is allowed (then the payload is missing). */
	snprintf(hdr, sizeof(hdr), "PT1 model %u\n", PT_PROTO_MAX_PAYLOAD);
	PT_CHECK_INT(recv_from(hdr, 0, &err), PT_EIO);
}

PT_TEST(send_checks_arguments)
{
	int fd[2];
	struct pt_proto p;
	struct pt_error err = PT_ERROR_INIT;

	make_pipe(fd);
	pt_proto_init(&p, -1, fd[1], 1000);
	PT_CHECK_INT(pt_proto_send(&p, "", "", 0, &err), PT_EINVAL);
	PT_CHECK_INT(pt_proto_send(&p, "Hello", "", 0, &err), PT_EINVAL);
	PT_CHECK_INT(pt_proto_send(&p, "abcdefghijklmnop", "", 0, &err),
		     PT_EINVAL);
	PT_CHECK_INT(pt_proto_send(&p, "model", NULL, 3, &err), PT_EINVAL);
	PT_CHECK_INT(pt_proto_send(&p, "model", "x",
				   (size_t)PT_PROTO_MAX_PAYLOAD + 1, &err),
		     PT_EINVAL);
	/* Nothing was written by the refused calls. */
	PT_CHECK_INT(pt_proto_send(&p, "ok", "", 0, &err), 0);
	close(fd[1]);
	{
		char buf[64];
		ssize_t n = read(fd[0], buf, sizeof(buf) - 1);

		PT_REQUIRE(n >= 0);
		buf[n] = '\0';
		PT_CHECK_STR(buf, "PT1 ok 0\n");
	}
	close(fd[0]);
}

PT_TEST(send_to_closed_peer)
{
	int fd[2], sv[2];
	struct pt_proto p;
	struct pt_error err = PT_ERROR_INIT;

	/* A socket needs no SIGPIPE handling (MSG_NOSIGNAL)... */
	PT_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	close(sv[0]);
	pt_proto_init(&p, -1, sv[1], 1000);
	PT_CHECK_INT(pt_proto_send(&p, "bye", "", 0, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "closed") != NULL);
	close(sv[1]);
	/* ...a pipe does, as documented. */
	signal(SIGPIPE, SIG_IGN);
	make_pipe(fd);
	close(fd[0]);
	pt_proto_init(&p, -1, fd[1], 1000);
	PT_CHECK_INT(pt_proto_send(&p, "bye", "", 0, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "closed") != NULL);
	close(fd[1]);
}

PT_TEST(write_timeout)
{
	int fd[2];
	struct pt_proto p;
	struct pt_error err = PT_ERROR_INIT;
	char *big = big_payload();
	long long t0 = pt_time_now_ms();

	/* Nobody reads: the pipe fills up and the send gives up in time. */
	make_pipe(fd);
	pt_proto_init(&p, -1, fd[1], 200);
	PT_CHECK_INT(pt_proto_send(&p, "model", big, BIG, &err),
		     PT_ETIMEDOUT);
	PT_CHECK(pt_time_now_ms() - t0 < 3000);
	PT_CHECK(strstr(err.msg, "does not read") != NULL);
	close(fd[0]);
	close(fd[1]);
	free(big);
}

PT_SUITE(proto,
	 { "round trip over a pipe", round_trip_pipe },
	 { "round trip with split and merged writes", round_trip_split_writes },
	 { "round trip over a socket", round_trip_socket },
	 { "both directions", both_directions_one_channel },
	 { "read timeout", read_timeout },
	 { "end of file", end_of_file },
	 { "garbage headers", garbage_headers },
	 { "garbage fails without waiting", garbage_fails_without_waiting },
	 { "oversized length", oversized_length },
	 { "send checks its arguments", send_checks_arguments },
	 { "send to a closed peer", send_to_closed_peer },
	 { "write timeout", write_timeout });
