/* SPDX-License-Identifier: MIT */
/*
 * The control socket: JSON lines over a Unix stream socket (mode 0600),
 * one request object per line, one reply object per line. Served from the
 * daemon's event loop without threads: non-blocking sockets, many clients
 * at once, replies written as the client reads them. What the front ends
 * count it reads from struct target's registry.
 */
#ifndef SDSWARM_CONTROL_H
#define SDSWARM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct cfg;
struct target;

/* Longest request line, newline excluded; a longer one closes the client. */
#define CTL_LINE_MAX 65536
/* Clients served at once; one more is told so and closed. */
#define CTL_MAX_CLIENTS 64
/* Slots beyond CTL_MAX_CLIENTS only root (uid 0) clients may take. */
#define CTL_ROOT_CLIENTS 1

/* Entries `names` sends per batch (and the client asks for per page). */
#define CTL_NAMES_BATCH 1024

/**
 * struct ctl_context - what the control socket acts on; all borrowed.
 * @target: the target: its LUN table, fault table, SCSI state (ALUA port
 *	groups, for `alua`) and the registry stats, metrics and sessions read.
 * @store: the store (status reports its counters).
 * @cfg: the configuration (scheme and prefix of `names`).
 * @idle_timeout: seconds a client may go without a byte either way before
 *	it is told so and closed; 0 never.
 */
struct ctl_context {
	struct target *target;
	struct store *store;
	const struct cfg *cfg;
	unsigned int idle_timeout;
};

struct ctl_server;

/**
 * ctl_default_path() - the control socket when neither --control nor
 * [target] control says: $XDG_RUNTIME_DIR/sdswarm/control, else
 * /run/sdswarm/control for root, else /tmp/sdswarm-$UID/control.
 * @buf: out, NUL-terminated.
 * @len: its size.
 *
 * Context: reads the environment; the daemon and the client agree.
 * Return: the length, or -ENAMETOOLONG if it does not fit @len or a
 * socket address.
 */
int ctl_default_path(char *buf, size_t len);

/**
 * ctl_server_create() - bind and listen on the control socket.
 * @out: out, the server.
 * @path: the socket path.
 * @ctx: what requests act on (copied; the pointers must outlive the server).
 *
 * Creates the socket's directory (mode 0700) if it is missing. A stale
 * socket (nobody answering) is replaced; a live one is left alone. The
 * socket is created mode 0600 (the umask is narrowed around bind()).
 * Context: the daemon's main thread.
 * Return: 0; -EADDRINUSE if another daemon answers on @path; -EEXIST if
 * @path exists and is not a socket; -ENAMETOOLONG; -EPERM (and a log line
 * saying which) if the directory belongs to a user other than the daemon's
 * or root, or is writable by group or others (allowed only for a sticky
 * root-owned one, such as /tmp); or the -errno of a system call.
 */
int ctl_server_create(struct ctl_server **out, const char *path,
		      const struct ctl_context *ctx);

/**
 * ctl_server_fd() - a descriptor that polls readable when the server has
 * work (an epoll descriptor over the socket and its clients).
 * @s: the server.
 *
 * Return: the descriptor, owned by @s.
 */
int ctl_server_fd(const struct ctl_server *s);

/**
 * ctl_server_run() - do all the work that is ready, without blocking:
 * accept clients, read requests, execute them, write replies.
 * @s: the server.
 *
 * Context: the thread that created @s, when ctl_server_fd() is readable
 * (calling it at other times is harmless).
 * Return: the number of events handled.
 */
int ctl_server_run(struct ctl_server *s);

/**
 * ctl_server_destroy() - close every client and the socket, and unlink the
 * socket if it is still the one this server bound. NULL is a no-op.
 * @s: the server.
 */
void ctl_server_destroy(struct ctl_server *s);

/**
 * ctl_execute() - run one request line in process and return the whole
 * reply (for tests and fuzzing; the socket path streams large replies).
 * @s: the server.
 * @line: the request, without its newline.
 * @len: its length.
 * @reply: out, the reply line with its newline, NUL-terminated; free().
 *
 * Return: 0, -ENOMEM.
 */
int ctl_execute(struct ctl_server *s, const char *line, size_t len,
		char **reply);

/**
 * ctl_connect() - connect to a control socket (the client side).
 * @path: the socket path.
 *
 * The peer's credentials (SO_PEERCRED) must be root's or the caller's
 * effective uid: anyone else who could bind the path might forge replies.
 *
 * Return: a connected, blocking, close-on-exec descriptor; -ENOENT (no
 * socket there), -ECONNREFUSED (no daemon behind it), -EPERM (the process
 * behind it is neither root nor the caller's uid), -ENAMETOOLONG, or
 * another -errno.
 */
int ctl_connect(const char *path);

#endif /* SDSWARM_CONTROL_H */
