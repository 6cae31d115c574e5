/* pt_proto.h: the channel between the ProTune plugin and a protune server
 * (doc/protocol.md).
 *
 * A channel is a pair of file descriptors (read, write). Messages are framed
 * as one header line "PT1 TYPE LENGTH\n" (TYPE a lowercase word, LENGTH the
 * decimal byte count of the payload, at most PT_PROTO_MAX_PAYLOAD) followed
 * by the payload bytes. The session:
 *
 *   plugin -> server   hello    "protune VERSION pid PID"
 *   plugin -> server   model    the model text (doc/model-format.md)
 *   server -> plugin   wait     progress text, any number, at least every
 *                               PT_PROTO_HEARTBEAT_MS while the server works
 *   server -> plugin   schedule the schedule text      | error  a message
 *   plugin -> server   applied  ""                     | refused  the reason
 *   (after `refused`, the server answers again with schedule or error;
 *    the plugin refuses at most PT_PROTO_MAX_REFUSALS times, then fails)
 *   plugin -> server   bye      ""                     then both close
 *
 * Every read has a timeout: a server that dies, hangs or answers garbage
 * makes the plugin fail with a clear message, never hang. SIGPIPE: writes
 * use MSG_NOSIGNAL where the fd is a socket and otherwise expect SIGPIPE to
 * be ignored by the caller (the plugin blocks it around writes).
 *
 * Ownership: a struct pt_proto_msg owns its payload (free with
 * pt_proto_msg_release). The module never closes descriptors it is given
 * unless pt_proto_close() is called. No global state.
 */
#ifndef PROTUNE_PT_PROTO_H
#define PROTUNE_PT_PROTO_H

#include <stddef.h>

#include "protune/pt_error.h"

#define PT_PROTO_MAX_PAYLOAD (64u << 20)
#define PT_PROTO_HEARTBEAT_MS 2000
#define PT_PROTO_MAX_REFUSALS 2
/* The environment variable through which protune-cc hands the channel to the
 * plugin: "RFD,WFD" (decimal descriptors the generator inherits). */
#define PT_PROTO_ENV_FDS "PROTUNE_CHANNEL_FDS"

struct pt_proto {
	int rfd, wfd;
	int timeout_ms;        /* per message read; <= 0: wait for ever */
	char *buf;             /* private read buffer */
	size_t len, cap;
};

struct pt_proto_msg {
	char type[16];
	char *payload;         /* NUL-terminated (the NUL is not counted) */
	size_t len;
};

void pt_proto_init(struct pt_proto *p, int rfd, int wfd, int timeout_ms);
int pt_proto_send(struct pt_proto *p, const char *type, const char *payload,
		  size_t len, struct pt_error *err);
/* Read the next message. PT_ETIMEDOUT when none arrives in time, PT_EIO on
 * end of file (the peer closed) or a read error, PT_EFORMAT on a malformed
 * header or an oversized payload. */
int pt_proto_recv(struct pt_proto *p, struct pt_proto_msg *msg,
		  struct pt_error *err);
void pt_proto_msg_release(struct pt_proto_msg *msg);
void pt_proto_release(struct pt_proto *p);  /* frees the buffer only */
void pt_proto_close(struct pt_proto *p);    /* release and close both fds */

#endif
