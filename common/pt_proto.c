/* pt_proto.c: message framing over a pair of descriptors (pt_proto.h,
 * doc/protocol.md).
 *
 * Reads go through a small private buffer, because the peer may send the
 * header of the next message in the same write as a payload; payloads are
 * read straight into their own allocation. Every read and write first
 * waits with poll() for the time left of the message, so that neither side
 * can hang on a peer that stopped reading or writing.
 */
#include "protune/pt_proto.h"
#include "protune/pt_time.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* "PT1 " + type (15) + " " + length (at most 20 digits) + "\n" */
#define HDR_MAGIC "PT1 "
#define HDR_MAX 48
#define TYPE_MAX 15
#define READ_CHUNK 65536
/* Bytes written per poll(): a pipe that polls writable takes this much
 * without blocking. */
#define WRITE_CHUNK 4096

void pt_proto_init(struct pt_proto *p, int rfd, int wfd, int timeout_ms)
{
	p->rfd = rfd;
	p->wfd = wfd;
	p->timeout_ms = timeout_ms;
	p->buf = NULL;
	p->len = 0;
	p->cap = 0;
}

void pt_proto_msg_release(struct pt_proto_msg *msg)
{
	free(msg->payload);
	msg->payload = NULL;
	msg->len = 0;
	msg->type[0] = '\0';
}

void pt_proto_release(struct pt_proto *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = 0;
	p->cap = 0;
}

void pt_proto_close(struct pt_proto *p)
{
	pt_proto_release(p);
	if (p->rfd >= 0)
		close(p->rfd);
	if (p->wfd >= 0 && p->wfd != p->rfd)
		close(p->wfd);
	p->rfd = -1;
	p->wfd = -1;
}

static int valid_type(const char *type)
{
	size_t n = 0;

	for (; type[n]; n++)
		if (type[n] < 'a' || type[n] > 'z' || n >= TYPE_MAX)
			return 0;
	return n > 0;
}

/* Milliseconds left until `deadline` for poll(): -1 without a deadline,
 * 0 once it has passed. */
static int left_ms(long long deadline)
{
	long long left;

	if (deadline < 0)
		return -1;
	left = deadline - pt_time_now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static long long deadline_for(const struct pt_proto *p)
{
	return p->timeout_ms > 0 ? pt_time_now_ms() + p->timeout_ms : -1;
}

/* Wait until `fd` is ready for `events`; 0, PT_ETIMEDOUT or PT_EIO.
 * POLLHUP and POLLERR count as ready: the read or write that follows
 * reports what happened. */
static int wait_fd(int fd, short events, long long deadline,
		   struct pt_error *err)
{
	struct pollfd pfd;
	int n;

	for (;;) {
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, left_ms(deadline));
		if (n > 0) {
			if (pfd.revents & POLLNVAL)
				return pt_error_set(err, PT_EIO,
						    "channel descriptor %d is not open",
						    fd);
			return 0;
		}
		if (n == 0)
			return PT_ETIMEDOUT;
		if (errno != EINTR && errno != EAGAIN)
			return pt_error_set(err, PT_EIO,
					    "poll on the channel failed: %s",
					    strerror(errno));
	}
}

/* Write all `len` bytes. *use_send starts at 1 and drops to 0 once the fd
 * turns out not to be a socket. */
static int write_all(int fd, const char *data, size_t len, int *use_send,
		     long long deadline, const char *type,
		     struct pt_error *err)
{
	while (len) {
		size_t n = len < WRITE_CHUNK ? len : WRITE_CHUNK;
		ssize_t w;
		int ret;

		ret = wait_fd(fd, POLLOUT, deadline, err);
		if (ret == PT_ETIMEDOUT)
			return pt_error_set(err, PT_ETIMEDOUT,
					    "timed out sending a '%s' message: the peer does not read",
					    type);
		if (ret)
			return ret;
		if (*use_send) {
			w = send(fd, data, n, MSG_NOSIGNAL);
			if (w < 0 && errno == ENOTSOCK) {
				*use_send = 0;
				continue;
			}
		} else {
			w = write(fd, data, n);
		}
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			if (errno == EPIPE)
				return pt_error_set(err, PT_EIO,
						    "cannot send a '%s' message: the peer closed the channel",
						    type);
			return pt_error_set(err, PT_EIO,
					    "cannot send a '%s' message: %s",
					    type, strerror(errno));
		}
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

int pt_proto_send(struct pt_proto *p, const char *type, const char *payload,
		  size_t len, struct pt_error *err)
{
	char hdr[HDR_MAX];
	long long deadline;
	int use_send = 1, n, ret;

	if (!type || !valid_type(type))
		return pt_error_set(err, PT_EINVAL,
				    "bad message type '%s' (want 1 to %d lowercase letters)",
				    type ? type : "(null)", TYPE_MAX);
	if (len > PT_PROTO_MAX_PAYLOAD)
		return pt_error_set(err, PT_EINVAL,
				    "a '%s' message of %zu bytes is over the limit of %u",
				    type, len, PT_PROTO_MAX_PAYLOAD);
	if (len && !payload)
		return pt_error_set(err, PT_EINVAL, "no payload given");
	n = snprintf(hdr, sizeof(hdr), HDR_MAGIC "%s %zu\n", type, len);
	if (n < 0 || (size_t)n >= sizeof(hdr))
		return pt_error_set(err, PT_EINVAL, "message header too long");
	deadline = deadline_for(p);
	ret = write_all(p->wfd, hdr, (size_t)n, &use_send, deadline, type, err);
	if (!ret && len)
		ret = write_all(p->wfd, payload, len, &use_send, deadline, type,
				err);
	return ret;
}

/* Describe up to 40 bytes of `s` for a message, with non-printing bytes
 * escaped. */
static void quote(const char *s, size_t len, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < len && i < 40 && o + 5 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else if (c == '\n')
			o += (size_t)snprintf(out + o, outsz - o, "\\n");
		else
			o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
	}
	if (i < len && o + 4 < outsz)
		o += (size_t)snprintf(out + o, outsz - o, "...");
	out[o] = '\0';
}

static int bad_header(const char *s, size_t len, const char *why,
		      struct pt_error *err)
{
	char q[256];

	quote(s, len, q, sizeof(q));
	return pt_error_set(err, PT_EFORMAT,
			    "malformed message header '%s': %s", q, why);
}

/* Could the `len` buffered bytes be the start of a header? Catches
 * garbage early, without waiting for a newline that may never come. */
static int check_prefix(const char *s, size_t len, struct pt_error *err)
{
	size_t m = len < 4 ? len : 4;

	if (memcmp(s, HDR_MAGIC, m))
		return bad_header(s, len, "it does not start with 'PT1 '", err);
	if (len > HDR_MAX && !memchr(s, '\n', HDR_MAX))
		return bad_header(s, len, "no end of line in the first bytes",
				  err);
	return 0;
}

/* Parse the header line s[0..len) (without its newline). */
static int parse_header(const char *s, size_t len, struct pt_proto_msg *msg,
			size_t *paylen, struct pt_error *err)
{
	size_t i = 4, t = 0, digits = 0;
	uint64_t n = 0;

	if (len < 4 || memcmp(s, HDR_MAGIC, 4))
		return bad_header(s, len, "it does not start with 'PT1 '", err);
	while (i < len && s[i] >= 'a' && s[i] <= 'z') {
		if (t == TYPE_MAX)
			return bad_header(s, len, "type longer than 15 letters",
					  err);
		msg->type[t++] = s[i++];
	}
	msg->type[t] = '\0';
	if (!t)
		return bad_header(s, len, "no type", err);
	if (i >= len || s[i] != ' ')
		return bad_header(s, len,
				  "the type is not followed by one space", err);
	i++;
	if (i < len && s[i] == '0' && i + 1 < len)
		return bad_header(s, len, "length with a leading zero", err);
	for (; i < len; i++, digits++) {
		if (s[i] < '0' || s[i] > '9')
			return bad_header(s, len, "length is not a decimal number",
					  err);
		if (digits >= 12)
			return bad_header(s, len, "length too long", err);
		n = n * 10 + (uint64_t)(s[i] - '0');
	}
	if (!digits)
		return bad_header(s, len, "no length", err);
	if (n > PT_PROTO_MAX_PAYLOAD)
		return pt_error_set(err, PT_EFORMAT,
				    "a '%s' message announces %llu bytes, over the limit of %u",
				    msg->type, (unsigned long long)n,
				    PT_PROTO_MAX_PAYLOAD);
	*paylen = (size_t)n;
	return 0;
}

/* Read once into dst (at most `room` bytes) after waiting for data.
 * Returns the byte count (0 at end of file) or a negative PT_E*. */
static ssize_t read_some(struct pt_proto *p, char *dst, size_t room,
			 long long deadline, struct pt_error *err)
{
	for (;;) {
		ssize_t r;
		int ret = wait_fd(p->rfd, POLLIN, deadline, err);

		if (ret)
			return ret;
		r = read(p->rfd, dst, room);
		if (r >= 0)
			return r;
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			return pt_error_set(err, PT_EIO,
					    "cannot read from the channel: %s",
					    strerror(errno));
	}
}

static int timed_out(const struct pt_proto *p, const char *what,
		     struct pt_error *err)
{
	return pt_error_set(err, PT_ETIMEDOUT,
			    "timed out after %d ms waiting for %s",
			    p->timeout_ms, what);
}

/* Read until the buffer holds a complete header line; returns its length
 * without the newline in *hlen. */
static int read_header(struct pt_proto *p, long long deadline, size_t *hlen,
		       struct pt_error *err)
{
	for (;;) {
		char *nl;
		ssize_t r;
		int ret;

		nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
		if (p->len && (ret = check_prefix(p->buf, nl ?
						  (size_t)(nl - p->buf) :
						  p->len, err)))
			return ret;
		if (nl) {
			*hlen = (size_t)(nl - p->buf);
			return 0;
		}
		if (p->cap - p->len < 1) {
			size_t cap = p->cap ? p->cap * 2 : READ_CHUNK;
			char *nb = realloc(p->buf, cap);

			if (!nb)
				return pt_error_set(err, PT_ENOMEM,
						    "out of memory");
			p->buf = nb;
			p->cap = cap;
		}
		r = read_some(p, p->buf + p->len, p->cap - p->len, deadline,
			      err);
		if (r == PT_ETIMEDOUT)
			return timed_out(p, p->len ? "the rest of a message header"
					 : "a message", err);
		if (r < 0)
			return (int)r;
		if (r == 0) {
			char q[256];

			if (!p->len)
				return pt_error_set(err, PT_EIO,
						    "the peer closed the channel");
			quote(p->buf, p->len, q, sizeof(q));
			return pt_error_set(err, PT_EIO,
					    "the peer closed the channel in the middle of a message header ('%s')",
					    q);
		}
		p->len += (size_t)r;
	}
}

int pt_proto_recv(struct pt_proto *p, struct pt_proto_msg *msg,
		  struct pt_error *err)
{
	long long deadline = deadline_for(p);
	size_t hlen, paylen = 0, have;
	char *payload;
	int ret;

	msg->payload = NULL;
	msg->len = 0;
	msg->type[0] = '\0';
	ret = read_header(p, deadline, &hlen, err);
	if (!ret)
		ret = parse_header(p->buf, hlen, msg, &paylen, err);
	if (ret) {
		msg->type[0] = '\0';
		return ret;
	}
	payload = malloc(paylen + 1);
	if (!payload)
		return pt_error_set(err, PT_ENOMEM,
				    "out of memory for a message of %zu bytes",
				    paylen);
	/* Consume the header, then take what is buffered of the payload. */
	hlen++;
	memmove(p->buf, p->buf + hlen, p->len - hlen);
	p->len -= hlen;
	have = p->len < paylen ? p->len : paylen;
	memcpy(payload, p->buf, have);
	memmove(p->buf, p->buf + have, p->len - have);
	p->len -= have;
	while (have < paylen) {
		ssize_t r = read_some(p, payload + have, paylen - have,
				      deadline, err);

		if (r == 0)
			r = pt_error_set(err, PT_EIO,
					 "the peer closed the channel after %zu of the %zu bytes of a '%s' message",
					 have, paylen, msg->type);
		else if (r == PT_ETIMEDOUT)
			r = timed_out(p, "the rest of a message", err);
		if (r < 0) {
			free(payload);
			msg->type[0] = '\0';
			return (int)r;
		}
		have += (size_t)r;
	}
	payload[paylen] = '\0';
	msg->payload = payload;
	msg->len = paylen;
	return 0;
}
