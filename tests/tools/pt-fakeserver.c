/* pt-fakeserver: a scripted protune server for the plugin's failure tests.
 * The plugin starts it as `$PROTUNE_CC --serve`; it reads the plugin's hello
 * and model, then follows the script named in PT_FAKE_SCRIPT, one action a
 * line:
 *   schedule FILE   send FILE as the schedule; then read the plugin's
 *                   answer: `applied` ends the script, `refused` goes on
 *   error TEXT      send an error message
 *   garbage         write bytes that are not a message
 *   die             exit at once, closing the channel
 *   hang            sleep for ever without a word
 *   wait N          send N heartbeats 100 ms apart
 * Every message the plugin sends is logged to PT_FAKE_LOG ("TYPE LEN" and,
 * for `refused`, the reason) when set. */
#include "protune/pt_proto.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *logfp;

static int recv_msg(struct pt_proto *p, struct pt_proto_msg *m)
{
	struct pt_error err = PT_ERROR_INIT;

	if (pt_proto_recv(p, m, &err)) {
		fprintf(stderr, "pt-fakeserver: %s\n", err.msg);
		return -1;
	}
	if (logfp) {
		fprintf(logfp, "%s %zu%s%s\n", m->type, m->len,
			strcmp(m->type, "refused") ? "" : " ",
			strcmp(m->type, "refused") ? "" : m->payload);
		fflush(logfp);
	}
	return 0;
}

static int send_file(struct pt_proto *p, const char *path)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f) {
		perror(path);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		pt_strbuf_add(&sb, buf, n);
	fclose(f);
	ret = pt_proto_send(p, "schedule", sb.buf, sb.len, &err);
	if (ret)
		fprintf(stderr, "pt-fakeserver: %s\n", err.msg);
	pt_strbuf_release(&sb);
	return ret;
}

int main(int argc, char **argv)
{
	struct pt_proto p;
	struct pt_proto_msg m = { { 0 }, NULL, 0 };
	struct pt_error err = PT_ERROR_INIT;
	const char *script = getenv("PT_FAKE_SCRIPT");
	char line[4096];
	FILE *sf;
	int i;

	if (argc != 2 || strcmp(argv[1], "--serve") != 0 || !script) {
		fputs("usage: PT_FAKE_SCRIPT=FILE pt-fakeserver --serve\n",
		      stderr);
		return 2;
	}
	if (getenv("PT_FAKE_LOG"))
		logfp = fopen(getenv("PT_FAKE_LOG"), "a");
	pt_proto_init(&p, 0, 1, 60000);
	for (i = 0; i < 2; i++) {  /* hello, model */
		if (recv_msg(&p, &m))
			return 1;
		pt_proto_msg_release(&m);
	}
	if (!(sf = fopen(script, "r"))) {
		perror(script);
		return 1;
	}
	while (fgets(line, sizeof(line), sf)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "schedule ", 9) == 0) {
			if (send_file(&p, line + 9) || recv_msg(&p, &m))
				return 1;
			i = strcmp(m.type, "applied") == 0;
			pt_proto_msg_release(&m);
			if (i)
				break;
		} else if (strncmp(line, "error ", 6) == 0) {
			pt_proto_send(&p, "error", line + 6, strlen(line + 6),
				      &err);
		} else if (strcmp(line, "garbage") == 0) {
			if (write(1, "HTTP/1.1 200 OK\r\n\r\n", 19) < 0)
				return 1;
		} else if (strcmp(line, "die") == 0) {
			return 3;
		} else if (strcmp(line, "hang") == 0) {
			for (;;)
				pause();
		} else if (strncmp(line, "wait ", 5) == 0) {
			for (i = atoi(line + 5); i > 0; i--) {
				pt_proto_send(&p, "wait", "fake", 4, &err);
				pt_time_sleep_ms(100);
			}
		}
	}
	fclose(sf);
	/* Drain until the plugin closes (bye, or end of file). */
	while (pt_proto_recv(&p, &m, &err) == 0) {
		if (logfp)
			fprintf(logfp, "%s %zu\n", m.type, m.len);
		pt_proto_msg_release(&m);
	}
	pt_proto_release(&p);
	return 0;
}
