// SPDX-License-Identifier: MIT
/*
 * The control socket. One epoll set holds the listening socket and every
 * client; the daemon polls that set's descriptor in its own loop. A client
 * is read only while it has nothing left to receive, so a client that
 * sends without reading cannot make the daemon buffer without bound; the
 * one large reply, `names` over 262,144 LUNs, is generated a batch at a
 * time as the socket drains.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cli.h"
#include "config.h"
#include "control.h"
#include "fault.h"
#include "log.h"
#include "lun.h"
#include "parse.h"
#include "scsi/scsi.h"
#include "sdnum.h"
#include "store/store.h"
#include "target.h"

/* a full line and its newline */
#define IN_CAP (CTL_LINE_MAX + 1)
/* refill a names stream's output below this */
#define OUT_LOW (64u << 10)
#define MAX_FAULT_LIST 4096u

struct names_cursor {
	bool active;
	const struct sdnum_scheme *scheme;
	uint32_t next_lun; /* table LUN to look from */
	uint32_t index; /* probe-order ordinal of the next entry */
	uint64_t left; /* entries still to send */
	uint64_t sent;
};

struct ctl_client {
	int fd; /* -1 for ctl_execute()'s in-process client */
	uint32_t events; /* the epoll interest now registered */
	char *in;
	size_t in_len, in_cap;
	char *out;
	size_t out_len, out_off, out_cap;
	bool eof; /* the peer will send no more */
	bool closing; /* close once the output is written */
	bool oom;
	bool root; /* the peer is uid 0 (it may take a reserved slot) */
	uint64_t active_ns; /* CLOCK_MONOTONIC of the last byte either way */
	struct names_cursor names;
};

struct ctl_server {
	int epfd;
	int lfd;
	int tfd; /* a 1 s tick while accept is paused or clients may idle */
	bool timer_armed;
	bool accept_paused; /* out of descriptors: not polling lfd */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;
	ino_t ino;
	struct ctl_context ctx;
	struct timespec started;
	unsigned int nclients;
	struct ctl_client *clients[CTL_MAX_CLIENTS + CTL_ROOT_CLIENTS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- paths and sockets -------------------------------------------------- */

int ctl_default_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path);
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/sdswarm/control", xdg);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/run/sdswarm/control");
	else
		n = snprintf(buf, len, "/tmp/sdswarm-%u/control",
			     (unsigned int)geteuid());
	if (n < 0 || (size_t)n >= len || (size_t)n >= max)
		return -ENAMETOOLONG;
	return n;
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!n || n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, n + 1);
	return 0;
}

/* The peer's uid, or -1 if the kernel does not say. */
static long peer_uid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    len != sizeof(cr))
		return -1;
	return (long)cr.uid;
}

int ctl_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, ret;
	long uid;

	ret = fill_addr(&sa, path);
	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/*
	 * Whoever bound the path answers: in a directory another user could
	 * write, that may not be sdswarmd. Trust only root and ourselves.
	 */
	uid = peer_uid(fd);
	if (uid != 0 && uid != (long)geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * The socket's directory: made 0700 if missing. Whoever owns it or may
 * write to it can swap the socket for their own and answer in our place
 * (a /tmp/sdswarm-UID made in advance by another user), so, as ssh-agent
 * and tmux do, it must be ours and writable by nobody else; a root-owned
 * one (/run, or /tmp itself) may be writable by others if it is sticky.
 */
static int prepare_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	if (slash == dir)
		return 0;
	*slash = '\0';
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (stat(dir, &st) < 0)
			return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		log_err("control socket directory %s belongs to uid %u, not to uid %u (this daemon) or root",
			dir, (unsigned int)st.st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    (st.st_uid != 0 || !(st.st_mode & S_ISVTX))) {
		log_err("control socket directory %s has mode %04o: writable by group or others",
			dir, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* Replace a stale socket; refuse a live one or anything else. */
static int clear_path(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = ctl_connect(path);
	if (fd >= 0 || fd == -EPERM) { /* EPERM: another user answers */
		if (fd >= 0)
			close(fd);
		return -EADDRINUSE;
	}
	if (fd != -ECONNREFUSED)
		return fd;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int ctl_server_create(struct ctl_server **out, const char *path,
		      const struct ctl_context *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct sockaddr_un sa;
	struct ctl_server *s;
	struct stat st;
	mode_t old;
	int ret;

	ret = fill_addr(&sa, path);
	if (ret)
		return ret;
	ret = prepare_dir(path);
	if (ret)
		return ret;
	ret = clear_path(path);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = *ctx;
	strcpy(s->path, path);
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		ret = -errno;
		goto out_free;
	}
	/* 0600 from the start: nobody else may connect even for a moment */
	old = umask(0177);
	ret = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret < 0) {
		ret = -errno;
		goto out_close;
	}
	if (chmod(path, 0600) < 0 || stat(path, &st) < 0 ||
	    listen(s->lfd, 64) < 0) {
		ret = -errno;
		goto out_unlink;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		goto out_unlink;
	}
	ev.data.ptr = s;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) < 0) {
		ret = -errno;
		goto out_close_ep;
	}
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->tfd < 0) {
		ret = -errno;
		goto out_close_ep;
	}
	ev.data.ptr = &s->tfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev) < 0) {
		ret = -errno;
		goto out_close_tfd;
	}
	*out = s;
	return 0;

out_close_tfd:
	close(s->tfd);
out_close_ep:
	close(s->epfd);
out_unlink:
	unlink(path);
out_close:
	close(s->lfd);
out_free:
	free(s);
	return ret;
}

int ctl_server_fd(const struct ctl_server *s)
{
	return s->epfd;
}

/* ---- client buffers ----------------------------------------------------- */

static bool out_reserve(struct ctl_client *c, size_t more)
{
	size_t need, cap;
	char *nb;

	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	need = c->out_len + more + 1;
	if (need <= c->out_cap)
		return true;
	cap = c->out_cap ? c->out_cap : 4096;
	while (cap < need)
		cap *= 2;
	nb = realloc(c->out, cap);
	if (!nb) {
		c->oom = true;
		return false;
	}
	c->out = nb;
	c->out_cap = cap;
	return true;
}

static void out_append(struct ctl_client *c, const char *s, size_t n)
{
	if (!out_reserve(c, n))
		return;
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
	c->out[c->out_len] = '\0';
}

static void out_printf(struct ctl_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(struct ctl_client *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_append(c, buf,
			   (size_t)n < sizeof(buf) ? (size_t)n
						   : sizeof(buf) - 1);
}

/* Sends a JSON value as one line, and frees it. */
static void send_json(struct ctl_client *c, json_t *v)
{
	static const char oom[] =
		"{\"ok\":false,\"error\":\"out of memory\"}\n";
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;

	json_decref(v);
	if (!text) {
		out_append(c, oom, sizeof(oom) - 1);
		return;
	}
	out_append(c, text, strlen(text));
	out_append(c, "\n", 1);
	free(text);
}

static void send_error(struct ctl_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void send_error(struct ctl_client *c, const char *fmt, ...)
{
	char buf[512];
	json_t *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = json_object();
	if (v) {
		json_object_set_new(v, "ok", json_false());
		json_object_set_new(v, "error", json_string(buf));
	}
	send_json(c, v);
}

/* ---- request helpers ---------------------------------------------------- */

struct req {
	struct ctl_server *s;
	struct ctl_client *c;
	json_t *j;
	json_t *reply; /* {"ok":true, ...}: the handler adds to it */
	char err[400];
};

static int fail(struct req *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct req *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void set_u64(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

/*
 * An optional non-negative integer field: 0 absent, 1 present (in *out),
 * -1 bad (message in r->err).
 */
static int get_uint(struct req *r, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(r->j, key);
	json_int_t n;

	if (!v)
		return 0;
	if (!json_is_integer(v) || (n = json_integer_value(v)) < 0 ||
	    (uint64_t)n > max)
		return fail(r, "\"%s\" must be an integer from 0 to %" PRIu64,
			    key, max);
	*out = (uint64_t)n;
	return 1;
}

static int get_str(struct req *r, const char *key, const char **out)
{
	json_t *v = json_object_get(r->j, key);

	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(r, "\"%s\" must be a string", key);
	*out = json_string_value(v);
	return 1;
}

/* Every field of the request must be in @allowed (NULL-terminated). */
static int check_fields(struct req *r, const char *what,
			const char *const *allowed)
{
	const char *key;
	json_t *v;
	unsigned int i;

	json_object_foreach(r->j, key, v) {
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i])
			return fail(r, "unknown field \"%s\" for %s", key,
				    what);
	}
	return 0;
}

static uint64_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	if (n != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int list_faults(struct ctl_server *s, struct fault_rule *out,
		       unsigned int max)
{
	return fault_list(s->ctx.target->faults, out, max);
}

static const char *state_name(enum lun_state st)
{
	switch (st) {
	case LUN_ONLINE:
		return "online";
	case LUN_OFFLINE:
		return "offline";
	case LUN_NOT_READY:
		return "not-ready";
	case LUN_STOPPED:
		return "stopped";
	case LUN_REMOVING:
		return "removing";
	case LUN_NO_MEDIUM:
		return "no-medium";
	case LUN_SANITIZING:
		return "sanitizing";
	default:
		return "absent";
	}
}

static const char *group_name(const struct lun_table *t, unsigned int gi)
{
	const struct lun_group *g = lun_group_get(t, gi);

	return g ? g->name : "?";
}

/* The index of a LUN's group: its place in the table's group array. */
static int group_index(const struct lun_table *t, const struct lun_group *g)
{
	const struct lun_group *base = lun_group_get(t, 0);
	ptrdiff_t i;

	if (!base || !g)
		return -1;
	i = g - base;
	if (i < 0 || i >= LUN_MAX_GROUPS ||
	    lun_group_get(t, (unsigned int)i) != g)
		return -1;
	return (int)i;
}

static json_t *lun_json(struct lun_table *t, struct store *st, uint32_t lun)
{
	char serial[LUN_SERIAL_LEN + 1], wwn[40];
	struct lun_info li;
	json_t *o;

	if (lun_get(t, lun, &li))
		return NULL;
	o = json_object();
	if (o) {
		set_u64(o, "lun", lun);
		json_object_set_new(o, "state",
				    json_string(state_name(li.state)));
		json_object_set_new(o, "group", json_string(li.group->name));
		set_u64(o, "size", li.nblocks * li.block_size);
		set_u64(o, "blocks", li.nblocks);
		set_u64(o, "block_size", li.block_size);
		set_u64(o, "data_bytes", store_lun_bytes(st, lun));
		lun_serial(t, lun, serial, sizeof(serial));
		json_object_set_new(o, "serial", json_string(serial));
		snprintf(wwn, sizeof(wwn), "0x%016" PRIx64 "%016" PRIx64,
			 li.wwn_hi, li.wwn_lo);
		json_object_set_new(o, "wwn", json_string(wwn));
	}
	lun_put(t, &li);
	return o;
}

/* ---- commands ----------------------------------------------------------- */

static int cmd_status(struct req *r)
{
	static const char *const fields[] = {"cmd", "lun", NULL};
	struct lun_table *t = r->s->ctx.target->luns;
	uint64_t present[LUN_MAX_GROUPS] = {0},
		 states[LUN_SANITIZING + 1] = {0};
	uint32_t max = lun_max(t);
	struct timespec now;
	struct store_stats ss;
	struct fault_rule one;
	struct lun_info li;
	json_t *groups, *g, *o;
	const struct lun_group *lg;
	uint64_t lun = 0;
	unsigned int i;
	int l, gi, have;

	if (check_fields(r, "status", fields))
		return -1;
	have = get_uint(r, "lun", max - 1, &lun);
	if (have < 0)
		return -1;
	/* O(LUNs): one pin per LUN, a few ms at 262,144 */
	lun_for_each(t, l, 0, max - 1) {
		if (lun_get(t, (uint32_t)l, &li))
			continue;
		gi = group_index(t, li.group);
		if (gi >= 0)
			present[gi]++;
		if (li.state <= LUN_SANITIZING)
			states[li.state]++;
		lun_put(t, &li);
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	o = r->reply;
	set_u64(o, "pid", (uint64_t)getpid());
	set_u64(o, "luns", lun_count(t));
	set_u64(o, "max_luns", max);
	set_u64(o, "rss_bytes", rss_bytes());
	set_u64(o, "uptime_s", (uint64_t)(now.tv_sec - r->s->started.tv_sec));
	set_u64(o, "lun_table_bytes", lun_table_bytes(t));
	g = json_object();
	set_u64(g, "online", states[LUN_ONLINE]);
	set_u64(g, "offline", states[LUN_OFFLINE]);
	set_u64(g, "not_ready", states[LUN_NOT_READY]);
	set_u64(g, "stopped", states[LUN_STOPPED]);
	set_u64(g, "no_medium", states[LUN_NO_MEDIUM]);
	set_u64(g, "sanitizing", states[LUN_SANITIZING]);
	json_object_set_new(o, "states", g);
	groups = json_array();
	for (i = 0; (lg = lun_group_get(t, i)); i++) {
		g = json_object();
		json_object_set_new(g, "name", json_string(lg->name));
		set_u64(g, "index", i);
		set_u64(g, "first", lg->first);
		set_u64(g, "count", lg->count);
		set_u64(g, "present", present[i]);
		set_u64(g, "size", lg->size);
		set_u64(g, "block_size", lg->block_size);
		set_u64(g, "partitions", lg->nparts);
		json_object_set_new(
			g, "ptable",
			json_string(lg->nparts ? ptable_kind_name(lg->ptable)
					       : "none"));
		json_object_set_new(g, "thin", json_boolean(lg->thin));
		json_array_append_new(groups, g);
	}
	json_object_set_new(o, "groups", groups);
	store_get_stats(r->s->ctx.store, &ss);
	g = json_object();
	json_object_set_new(g, "kind",
			    json_string(store_kind(r->s->ctx.store)));
	set_u64(g, "data_bytes", ss.data_bytes);
	set_u64(g, "meta_bytes", ss.meta_bytes);
	set_u64(g, "chunks", ss.chunks);
	set_u64(g, "writes", ss.writes);
	set_u64(g, "reads", ss.reads);
	set_u64(g, "unmapped_bytes", ss.unmapped_bytes);
	set_u64(g, "limit_hits", ss.limit_hits);
	set_u64(g, "luns", ss.luns);
	set_u64(g, "free_bytes", ss.free_bytes);
	set_u64(g, "slab_bytes", ss.slab_bytes);
	set_u64(g, "flushes", ss.flushes);
	set_u64(g, "syncs", ss.syncs);
	set_u64(g, "open_files", ss.open_files);
	set_u64(g, "fd_evictions", ss.fd_evictions);
	set_u64(g, "io_errors", ss.io_errors);
	json_object_set_new(o, "store", g);
	set_u64(o, "faults", (uint64_t)list_faults(r->s, &one, 1));
	set_u64(o, "faults_fired", fault_total_hits(r->s->ctx.target->faults));
	if (have) {
		g = lun_json(t, r->s->ctx.store, (uint32_t)lun);
		if (!g)
			return fail(r, "no LUN %" PRIu64, lun);
		json_object_set_new(o, "lun", g);
	}
	return 0;
}

/* The group a request names, or the only one there is. */
static int pick_group(struct req *r, unsigned int *out)
{
	struct lun_table *t = r->s->ctx.target->luns;
	const char *name = NULL;
	char list[256];
	size_t n = 0;
	unsigned int i;
	int gi;

	if (get_str(r, "group", &name) < 0)
		return -1;
	if (name) {
		gi = lun_group_find(t, name);
		if (gi < 0)
			return fail(r, "no group \"%s\"", name);
		*out = (unsigned int)gi;
		return 0;
	}
	if (lun_group_get(t, 0) && !lun_group_get(t, 1)) {
		*out = 0;
		return 0;
	}
	list[0] = '\0';
	for (i = 0; lun_group_get(t, i) && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
				      i ? ", " : "", group_name(t, i));
	if (!i)
		return fail(r, "the configuration has no LUN groups");
	return fail(r, "\"group\" is required (groups: %s)", list);
}

/* One range of lun list: its figures, and the fault rules that reach it. */
static void list_range(json_t *ranges, uint32_t first, uint32_t last,
		       const struct lun_info *li, uint64_t bytes,
		       const struct fault_rule *rules, int nrules)
{
	json_t *o = json_object();
	uint64_t nf = 0;
	int i;

	for (i = 0; i < nrules; i++)
		if (rules[i].lun_first <= last && rules[i].lun_last >= first)
			nf++;
	set_u64(o, "first", first);
	set_u64(o, "last", last);
	set_u64(o, "count", (uint64_t)last - first + 1);
	json_object_set_new(o, "group", json_string(li->group->name));
	json_object_set_new(o, "state", json_string(state_name(li->state)));
	set_u64(o, "size", li->nblocks * li->block_size);
	set_u64(o, "block_size", li->block_size);
	set_u64(o, "data_bytes", bytes);
	set_u64(o, "faults", nf);
	json_array_append_new(ranges, o);
}

/*
 * lun list: the present LUNs as ranges (inclusive) of one group, state and
 * size, each with the bytes it stores and the fault rules reaching it.
 * O(LUNs), one pin each, as status.
 */
static int lun_list(struct req *r)
{
	struct lun_table *t = r->s->ctx.target->luns;
	struct store *st = r->s->ctx.store;
	uint32_t max = lun_max(t), first = 0, last = 0;
	struct fault_rule one, *rules = NULL;
	struct lun_info li, cur;
	uint64_t bytes = 0;
	bool open = false;
	json_t *ranges;
	int l, nrules;

	if (json_object_get(r->j, "lun") || json_object_get(r->j, "group") ||
	    json_object_get(r->j, "size"))
		return fail(r,
			    "op list takes no \"lun\", \"group\" or \"size\"");
	nrules = list_faults(r->s, &one, 1);
	if (nrules > 0) {
		rules = calloc((size_t)nrules, sizeof(*rules));
		if (!rules)
			return fail(r, "out of memory");
		nrules = list_faults(r->s, rules, (unsigned int)nrules);
	}
	ranges = json_array();
	lun_for_each(t, l, 0, max - 1) {
		if (lun_get(t, (uint32_t)l, &li))
			continue;
		if (open && (uint32_t)l == last + 1 && li.group == cur.group &&
		    li.state == cur.state && li.nblocks == cur.nblocks &&
		    li.block_size == cur.block_size) {
			last = (uint32_t)l;
		} else {
			if (open)
				list_range(ranges, first, last, &cur, bytes,
					   rules, nrules);
			open = true;
			first = last = (uint32_t)l;
			cur = li;
			bytes = 0;
		}
		bytes += store_lun_bytes(st, (uint32_t)l);
		lun_put(t, &li);
	}
	if (open)
		list_range(ranges, first, last, &cur, bytes, rules, nrules);
	free(rules);
	set_u64(r->reply, "luns", lun_count(t));
	json_object_set_new(r->reply, "ranges", ranges);
	return 0;
}

static int cmd_lun(struct req *r)
{
	static const char *const fields[] = {"cmd",   "op",   "lun",
					     "group", "size", NULL};
	struct lun_table *t = r->s->ctx.target->luns;
	uint32_t max = lun_max(t);
	const char *op = NULL, *sizes = NULL;
	json_t *jsize;
	uint64_t lun = 0, size = 0;
	unsigned int gi = 0;
	int have, ret;
	bool on;

	if (check_fields(r, "lun", fields))
		return -1;
	if (get_str(r, "op", &op) <= 0)
		return fail(
			r,
			"\"op\" is required (add, remove, resize, offline, online, list)");
	if (strcmp(op, "list") == 0)
		return lun_list(r);
	have = get_uint(r, "lun", max - 1, &lun);
	if (have < 0)
		return -1;
	if (strcmp(op, "add") == 0) {
		if (json_object_get(r->j, "size"))
			return fail(r, "\"size\" does not apply to op add");
		if (pick_group(r, &gi))
			return -1;
		ret = lun_add(t, have ? (uint32_t)lun : UINT32_MAX, gi);
		if (ret == -EEXIST)
			return fail(r, "LUN %" PRIu64 " exists", lun);
		if (ret == -ENOSPC)
			return fail(r, "no free LUN number at or above %u",
				    lun_group_get(t, gi)->first);
		if (ret < 0)
			return fail(r, "cannot add: %s", strerror(-ret));
		log_lun_info(ret, "added (group %s)", group_name(t, gi));
		set_u64(r->reply, "lun", (uint64_t)ret);
		json_object_set_new(r->reply, "group",
				    json_string(group_name(t, gi)));
		return 0;
	}
	if (json_object_get(r->j, "group"))
		return fail(r, "\"group\" applies only to op add");
	if (!have)
		return fail(r, "\"lun\" is required for op %s", op);
	if (strcmp(op, "remove") == 0 || strcmp(op, "offline") == 0 ||
	    strcmp(op, "online") == 0) {
		if (json_object_get(r->j, "size"))
			return fail(r, "\"size\" applies only to op resize");
		if (op[1] == 'e') {
			ret = lun_remove(t, (uint32_t)lun);
		} else {
			on = strcmp(op, "online") == 0;
			ret = lun_set_state(t, (uint32_t)lun,
					    on ? LUN_ONLINE : LUN_OFFLINE);
		}
		if (ret == -ENOENT)
			return fail(r, "no LUN %" PRIu64, lun);
		if (ret < 0)
			return fail(r, "%s: %s", op, strerror(-ret));
		log_lun_info(lun, "%s", op[1] == 'e' ? "removed" : op);
		set_u64(r->reply, "lun", lun);
		if (op[1] != 'e')
			json_object_set_new(r->reply, "state", json_string(op));
		return 0;
	}
	if (strcmp(op, "resize") != 0)
		return fail(
			r,
			"unknown op \"%s\" (add, remove, resize, offline, online, list)",
			op);
	jsize = json_object_get(r->j, "size");
	if (json_is_string(jsize)) {
		sizes = json_string_value(jsize);
		if (parse_size(sizes, UINT64_MAX, &size))
			return fail(
				r,
				"\"size\": %s is not a size (use a number with K, M, G, T or P)",
				sizes);
	} else if (json_is_integer(jsize) && json_integer_value(jsize) > 0) {
		size = (uint64_t)json_integer_value(jsize);
	} else {
		return fail(
			r,
			"\"size\" is required for op resize: bytes, or a string like \"2G\"");
	}
	ret = lun_resize(t, (uint32_t)lun, size);
	if (ret == -ENOENT)
		return fail(r, "no LUN %" PRIu64, lun);
	if (ret == -EINVAL)
		return fail(
			r,
			"size %" PRIu64
			" is not a positive multiple of the LUN's block size, or is over 8P",
			size);
	if (ret < 0)
		return fail(r, "resize: %s", strerror(-ret));
	log_lun_info(lun, "resized to %" PRIu64 " bytes", size);
	set_u64(r->reply, "lun", lun);
	set_u64(r->reply, "size", size);
	return 0;
}

static json_t *rule_json(const struct fault_rule *fr)
{
	char text[FAULT_RULE_FORMAT_LEN];
	json_t *o = json_object();

	if (!o)
		return NULL;
	fault_rule_format(fr, text, sizeof(text));
	set_u64(o, "id", fr->id);
	json_object_set_new(o, "rule", json_string(text));
	json_object_set_new(o, "kind", json_string(fault_kind_name(fr->kind)));
	set_u64(o, "hits", fr->hits);
	set_u64(o, "count_left", fr->count);
	return o;
}

static int cmd_fault(struct req *r)
{
	static const char *const fields[] = {"cmd", "op", "rule", "id", NULL};
	struct fault_table *ft = r->s->ctx.target->faults;
	struct fault_rule rule, *list;
	const char *op = NULL, *text = NULL;
	char why[256];
	json_t *id, *arr;
	int ret, n, i;

	if (check_fields(r, "fault", fields))
		return -1;
	if (get_str(r, "op", &op) <= 0)
		return fail(r, "\"op\" is required (set, clear, list)");
	if (strcmp(op, "set") == 0) {
		if (json_object_get(r->j, "id"))
			return fail(r, "\"id\" applies only to op clear");
		if (get_str(r, "rule", &text) <= 0)
			return fail(r, "\"rule\" is required for op set");
		if (fault_rule_parse(text, lun_max(r->s->ctx.target->luns),
				     &rule, why, sizeof(why)))
			return fail(r, "rule: %s", why);
		ret = fault_add(ft, &rule);
		if (ret == -ENOSPC)
			return fail(
				r,
				"too many fault rules (at most %u; clear some first)",
				FAULT_MAX_RULES);
		if (ret < 0)
			return fail(r, "rule: %s", strerror(-ret));
		rule.id = (uint32_t)ret;
		fault_rule_format(&rule, why, sizeof(why));
		log_notice("fault %d set: %s", ret, why);
		set_u64(r->reply, "id", (uint64_t)ret);
		json_object_set_new(r->reply, "rule", json_string(why));
		return 0;
	}
	if (json_object_get(r->j, "rule"))
		return fail(r, "\"rule\" applies only to op set");
	if (strcmp(op, "clear") == 0) {
		id = json_object_get(r->j, "id");
		if (json_is_string(id) &&
		    strcmp(json_string_value(id), "all") == 0) {
			ret = fault_clear(ft, 0);
		} else if (json_is_integer(id) && json_integer_value(id) > 0 &&
			   json_integer_value(id) <= UINT32_MAX) {
			ret = fault_clear(ft, (uint32_t)json_integer_value(id));
			if (ret == -ENOENT)
				return fail(
					r,
					"no fault rule %" JSON_INTEGER_FORMAT,
					json_integer_value(id));
		} else {
			return fail(
				r,
				"\"id\" is required for op clear: a rule id, or \"all\"");
		}
		if (ret < 0)
			return fail(r, "clear: %s", strerror(-ret));
		log_notice("fault rules cleared: %d", ret);
		set_u64(r->reply, "cleared", (uint64_t)ret);
		return 0;
	}
	if (strcmp(op, "list") != 0)
		return fail(r, "unknown op \"%s\" (set, clear, list)", op);
	if (json_object_get(r->j, "id"))
		return fail(r, "\"id\" applies only to op clear");
	list = calloc(MAX_FAULT_LIST, sizeof(*list));
	if (!list)
		return fail(r, "out of memory");
	n = list_faults(r->s, list, MAX_FAULT_LIST);
	if (n > (int)MAX_FAULT_LIST)
		n = MAX_FAULT_LIST;
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, rule_json(&list[i]));
	free(list);
	json_object_set_new(r->reply, "faults", arr);
	set_u64(r->reply, "fired", fault_total_hits(ft));
	return 0;
}

/* A port group as JSON: name, id, state, ports, changed. */
static json_t *group_json(const struct scsi_alua *a, unsigned int i)
{
	const struct scsi_alua_group *g = &a->groups[i];
	json_t *o = json_object(), *ports = json_array();
	unsigned int p;

	json_object_set_new(o, "name", json_string(g->name));
	set_u64(o, "id", g->id);
	json_object_set_new(o, "state",
			    json_string(scsi_alua_state_name(__atomic_load_n(
				    &g->state, __ATOMIC_RELAXED))));
	for (p = 1; p <= a->nports; p++)
		if (a->port_group[p - 1] == i)
			json_array_append_new(ports, json_integer(p));
	json_object_set_new(o, "ports", ports);
	json_object_set_new(
		o, "changed",
		json_boolean(__atomic_load_n(&g->changed, __ATOMIC_RELAXED)));
	return o;
}

/*
 * {"cmd":"alua","op":"list"} and {"cmd":"alua","op":"set","group":G,
 * "state":S}: the ALUA port groups and an implicit state change (every
 * I_T nexus gets ASYMMETRIC ACCESS STATE CHANGED).
 */
static int cmd_alua(struct req *r)
{
	static const char *const fields[] = {"cmd", "op", "group", "state",
					     NULL};
	struct scsi_target *t = r->s->ctx.target->scsi;
	const char *op = "list", *group = NULL, *state = NULL;
	enum scsi_alua_state st;
	const struct scsi_alua *a;
	char names[SCSI_ALUA_MAX_GROUPS * (SCSI_ALUA_NAME_MAX + 2) + 1];
	unsigned int i;
	size_t n = 0;
	json_t *arr;
	int ret;

	if (check_fields(r, "alua", fields))
		return -1;
	if (get_str(r, "op", &op) < 0)
		return -1;
	if (!t || !t->alua)
		return fail(
			r,
			"no ALUA: the configuration has no [port_group.NAME] (see sdswarm.conf(5))");
	a = t->alua;
	if (strcmp(op, "list") == 0) {
		if (json_object_get(r->j, "group") ||
		    json_object_get(r->j, "state"))
			return fail(
				r,
				"\"group\" and \"state\" apply only to op set");
		arr = json_array();
		for (i = 0; i < a->ngroups; i++)
			json_array_append_new(arr, group_json(a, i));
		json_object_set_new(r->reply, "groups", arr);
		return 0;
	}
	if (strcmp(op, "set") != 0)
		return fail(r, "unknown op \"%s\" (list, set)", op);
	if (get_str(r, "group", &group) <= 0)
		return fail(r, "\"group\" is required for op set");
	if (get_str(r, "state", &state) <= 0)
		return fail(r, "\"state\" is required for op set");
	if (scsi_alua_state_parse(state, &st))
		return fail(
			r,
			"state \"%s\": not active/optimized (ao), active/non-optimized (an), standby or unavailable",
			state);
	ret = scsi_alua_set(t, group, st);
	if (ret == -ENOENT) {
		names[0] = '\0';
		for (i = 0; i < a->ngroups; i++)
			n += (size_t)snprintf(names + n, sizeof(names) - n,
					      "%s%s", i ? ", " : "",
					      a->groups[i].name);
		return fail(r, "no port group \"%s\" (groups: %s)", group,
			    names);
	}
	if (ret < 0)
		return fail(r, "set: %s", strerror(-ret));
	for (i = 0; i < a->ngroups; i++) {
		if (!strcmp(a->groups[i].name, group) ||
		    (group[0] >= '0' && group[0] <= '9' &&
		     a->groups[i].id == strtoul(group, NULL, 10))) {
			json_object_set_new(r->reply, "group",
					    group_json(a, i));
			break;
		}
	}
	if (ret)
		log_notice("alua: port group %s is now %s", group,
			   scsi_alua_state_name(st));
	json_object_set_new(r->reply, "changed", json_boolean(ret == 1));
	return 0;
}

/* "A-B" or "A" (inclusive) below @max; -1 (message in r->err) if not. */
static int parse_luns(struct req *r, const char *key, const char *v,
		      uint32_t max, uint32_t *first, uint32_t *last)
{
	char buf[64], *dash;
	uint64_t a, b;

	if (strlen(v) >= sizeof(buf))
		goto bad;
	strcpy(buf, v);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_u64(buf, 10, UINT64_MAX, &a))
		goto bad;
	b = a;
	if ((dash && parse_u64(dash + 1, 10, UINT64_MAX, &b)) || a > b)
		goto bad;
	if (b >= max)
		return fail(r, "\"%s\": LUN %" PRIu64 " is past max_luns (%u)",
			    key, b, max);
	*first = (uint32_t)a;
	*last = (uint32_t)b;
	return 0;
bad:
	return fail(r, "\"%s\": \"%.40s\" is not a LUN or a range A-B", key, v);
}

/* The latency percentiles of log2 buckets @lat. */
static json_t *lat_json(const uint64_t *lat)
{
	struct scsi_stats_sum *tmp = calloc(1, sizeof(*tmp));
	json_t *o = json_object();

	if (!tmp)
		return o;
	memcpy(tmp->lat, lat, sizeof(tmp->lat));
	set_u64(o, "p50", scsi_lat_percentile(tmp, 50.0));
	set_u64(o, "p99", scsi_lat_percentile(tmp, 99.0));
	set_u64(o, "p999", scsi_lat_percentile(tmp, 99.9));
	free(tmp);
	return o;
}

/* What the file front ends (FUSE) served, for stats. */
static json_t *fuse_json(const struct target_snapshot *snap)
{
	const struct target_file_sum *fs = &snap->file;
	uint64_t n = 0, errs = 0, bytes = 0;
	json_t *o = json_object(), *ops = json_array(), *op;
	unsigned int i, fronts = snap->sources[TARGET_SRC_FILE];

	for (i = 0; i < TARGET_FILE_OPS; i++) {
		op = json_object();
		json_object_set_new(op, "op",
				    json_string(target_file_op_name(i)));
		set_u64(op, "count", fs->count[i]);
		set_u64(op, "errors", fs->errors[i]);
		set_u64(op, "bytes", fs->bytes[i]);
		json_array_append_new(ops, op);
		n += fs->count[i];
		errs += fs->errors[i];
		bytes += fs->bytes[i];
	}
	set_u64(o, "running", fronts);
	set_u64(o, "requests", n);
	set_u64(o, "errors", errs);
	set_u64(o, "bytes", bytes);
	set_u64(o, "reads", fs->count[TARGET_FILE_READ]);
	set_u64(o, "read_bytes", fs->bytes[TARGET_FILE_READ]);
	set_u64(o, "writes", fs->count[TARGET_FILE_WRITE]);
	set_u64(o, "write_bytes", fs->bytes[TARGET_FILE_WRITE]);
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "latency_ns", lat_json(fs->lat));
	return o;
}

/*
 * Per-LUN counters: "count_luns" "A-B" turns them on for those LUNs (from
 * zero), "off" turns them off; "luns" "A-B" lists the present LUNs of that
 * range the window covers.
 */
static int stats_luns(struct req *r)
{
	struct lun_table *t = r->s->ctx.target->luns;
	const char *count = NULL, *luns = NULL;
	uint32_t first, last, wf, wl, max = lun_max(t), l;
	struct lun_io_stats io;
	json_t *arr, *o;
	int ret, on;

	if (get_str(r, "count_luns", &count) < 0 ||
	    get_str(r, "luns", &luns) < 0)
		return -1;
	if (count && strcmp(count, "off") == 0) {
		lun_stats_disable(t);
		log_info("per-LUN counters off");
	} else if (count) {
		if (parse_luns(r, "count_luns", count, max, &first, &last))
			return -1;
		if (last - first >= LUN_STATS_MAX)
			return fail(
				r,
				"\"count_luns\": %u LUNs; per-LUN counters cover at most %u at once",
				last - first + 1, LUN_STATS_MAX);
		ret = lun_stats_enable(t, first, last);
		if (ret)
			return fail(r, "per-LUN counters: %s", strerror(-ret));
		log_info("per-LUN counters on for LUNs %u-%u", first, last);
	}
	on = lun_stats_window(t, &wf, &wl);
	if (on) {
		o = json_object();
		set_u64(o, "first", wf);
		set_u64(o, "last", wl);
		json_object_set_new(r->reply, "lun_counters", o);
	} else {
		json_object_set_new(r->reply, "lun_counters", json_null());
	}
	if (!luns)
		return 0;
	if (parse_luns(r, "luns", luns, max, &first, &last))
		return -1;
	if (!on)
		return fail(
			r,
			"per-LUN counters are off (turn them on with sdswarm stats --count-luns A-B)");
	if (last < wf || first > wl)
		return fail(
			r,
			"LUNs %u-%u are not counted (per-LUN counters cover LUNs %u-%u)",
			first, last, wf, wl);
	if (first < wf)
		first = wf;
	if (last > wl)
		last = wl;
	arr = json_array();
	for (l = first;; l++) {
		if (lun_exists(t, l) && !lun_stats_get(t, l, &io)) {
			o = json_object();
			set_u64(o, "lun", l);
			set_u64(o, "reads", io.reads);
			set_u64(o, "writes", io.writes);
			set_u64(o, "read_bytes", io.read_bytes);
			set_u64(o, "write_bytes", io.write_bytes);
			set_u64(o, "errors", io.errors);
			json_array_append_new(arr, o);
		}
		if (l == last)
			break;
	}
	json_object_set_new(r->reply, "luns", arr);
	return 0;
}

static int cmd_stats(struct req *r)
{
	static const char *const fields[] = {"cmd", "luns", "count_luns", NULL};
	struct target_snapshot *snap;
	struct scsi_stats_sum *sum;
	uint64_t cmds = 0, errs = 0, bytes = 0;
	char opcode[8];
	unsigned int i, threads;
	json_t *ops, *o;

	if (check_fields(r, "stats", fields))
		return -1;
	if (stats_luns(r))
		return -1;
	snap = malloc(sizeof(*snap));
	if (!snap)
		return fail(r, "out of memory");
	target_snapshot(r->s->ctx.target, snap,
			TARGET_KIND(TARGET_SRC_SCSI) |
				TARGET_KIND(TARGET_SRC_FILE));
	sum = &snap->scsi;
	threads = snap->sources[TARGET_SRC_SCSI];
	ops = json_array();
	for (i = 0; i < 256; i++) {
		const struct scsi_op_sum *os = &sum->op[i];

		if (!os->count && !os->errors)
			continue;
		o = json_object();
		snprintf(opcode, sizeof(opcode), "0x%02x", i);
		json_object_set_new(o, "opcode", json_string(opcode));
		json_object_set_new(
			o, "name",
			json_string(scsi_opcode_name((uint8_t)i)
					    ? scsi_opcode_name((uint8_t)i)
					    : "unsupported"));
		set_u64(o, "count", os->count);
		set_u64(o, "bytes", os->bytes);
		set_u64(o, "errors", os->errors);
		json_array_append_new(ops, o);
		cmds += os->count;
		errs += os->errors;
		bytes += os->bytes;
	}
	set_u64(r->reply, "now_ns", now_ns());
	set_u64(r->reply, "threads", threads);
	set_u64(r->reply, "commands", cmds);
	set_u64(r->reply, "errors", errs);
	set_u64(r->reply, "bytes", bytes);
	json_object_set_new(r->reply, "ops", ops);
	json_object_set_new(r->reply, "latency_ns", lat_json(sum->lat));
	json_object_set_new(r->reply, "fuse", fuse_json(snap));
	set_u64(r->reply, "faults_fired",
		fault_total_hits(r->s->ctx.target->faults));
	set_u64(r->reply, "faults_counted", sum->faults);
	free(snap);
	return 0;
}

/*
 * metrics: the counters as OpenMetrics text (the Prometheus exposition
 * format), in "text" of the reply, for `sdswarm metrics` to print or a
 * textfile collector to pick up. Latency is a histogram over the same
 * log2 buckets `stats` reads its percentiles from; it has no _sum, which
 * the daemon does not keep.
 */
static void metric_head(FILE *f, const char *name, const char *type,
			const char *help)
{
	fprintf(f, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

/* One counter family over the opcodes seen: @which 0 count, 1 errors,
 * 2 bytes. */
static void metric_ops(FILE *f, const struct scsi_stats_sum *sum,
		       const char *name, int which, const char *help)
{
	const struct scsi_op_sum *os;
	const char *op;
	unsigned int i;

	metric_head(f, name, "counter", help);
	for (i = 0; i < 256; i++) {
		os = &sum->op[i];
		if (!os->count && !os->errors)
			continue;
		op = scsi_opcode_name((uint8_t)i);
		fprintf(f,
			"%s_total{opcode=\"0x%02x\",name=\"%s\"} %" PRIu64 "\n",
			name, i, op ? op : "unsupported",
			which == 0   ? os->count
			: which == 1 ? os->errors
				     : os->bytes);
	}
}

/*
 * A histogram's buckets from log2 ns counters: bucket b holds 2^(b-1)..
 * 2^b - 1 ns, so le is 2^b - 1 ns; the last (2^62 ns up) is +Inf.
 */
static void metric_histogram(FILE *f, const char *name, const uint64_t *lat)
{
	unsigned int i, top = 0;
	uint64_t cum = 0;

	for (i = 0; i < SCSI_LAT_BUCKETS; i++)
		if (lat[i])
			top = i;
	for (i = 0; i <= top && i < SCSI_LAT_BUCKETS - 1; i++) {
		cum += lat[i];
		fprintf(f, "%s_bucket{le=\"%.9g\"} %" PRIu64 "\n", name,
			i ? (double)((1ull << i) - 1) / 1e9 : 0.0, cum);
	}
	for (; i < SCSI_LAT_BUCKETS; i++)
		cum += lat[i];
	fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, cum);
	fprintf(f, "%s_count %" PRIu64 "\n", name, cum);
}

/* One counter family over the FUSE request kinds. */
static void metric_file(FILE *f, const char *name, const uint64_t *v,
			const char *help)
{
	unsigned int i;

	metric_head(f, name, "counter", help);
	for (i = 0; i < TARGET_FILE_OPS; i++)
		fprintf(f, "%s_total{op=\"%s\"} %" PRIu64 "\n", name,
			target_file_op_name(i), v[i]);
}

static int cmd_metrics(struct req *r)
{
	static const char *const fields[] = {"cmd", NULL};
	static const char *const state_names[] = {
		[LUN_ONLINE] = "online",	 [LUN_OFFLINE] = "offline",
		[LUN_NOT_READY] = "not_ready",	 [LUN_STOPPED] = "stopped",
		[LUN_REMOVING] = "removing",	 [LUN_NO_MEDIUM] = "no_medium",
		[LUN_SANITIZING] = "sanitizing",
	};
	struct lun_table *t = r->s->ctx.target->luns;
	uint64_t states[LUN_SANITIZING + 1] = {0};
	struct target_snapshot *snap;
	const struct target_file_sum *fs;
	uint32_t max = lun_max(t);
	struct scsi_stats_sum *sum;
	struct store_stats ss;
	struct timespec now;
	struct lun_info li;
	char *text = NULL;
	size_t len = 0;
	unsigned int i;
	FILE *f;
	int l;

	if (check_fields(r, "metrics", fields))
		return -1;
	snap = calloc(1, sizeof(*snap));
	f = open_memstream(&text, &len);
	if (!snap || !f) {
		free(snap);
		if (f)
			fclose(f);
		free(text);
		return fail(r, "out of memory");
	}
	target_snapshot(r->s->ctx.target, snap,
			TARGET_KIND(TARGET_SRC_SCSI) |
				TARGET_KIND(TARGET_SRC_FILE));
	sum = &snap->scsi;
	fs = &snap->file;
	/* O(LUNs), as status */
	lun_for_each(t, l, 0, max - 1) {
		if (lun_get(t, (uint32_t)l, &li))
			continue;
		if (li.state <= LUN_SANITIZING)
			states[li.state]++;
		lun_put(t, &li);
	}
	store_get_stats(r->s->ctx.store, &ss);
	clock_gettime(CLOCK_MONOTONIC, &now);

	metric_head(f, "sdswarm_build", "info",
		    "The version sdswarmd was built from.");
	fprintf(f, "sdswarm_build_info{version=\"%s\"} 1\n", cli_version());
	metric_head(f, "sdswarm_uptime_seconds", "gauge",
		    "Seconds since sdswarmd started.");
	fprintf(f, "sdswarm_uptime_seconds %lld\n",
		(long long)(now.tv_sec - r->s->started.tv_sec));
	metric_head(f, "sdswarm_resident_memory_bytes", "gauge",
		    "Resident set size of sdswarmd.");
	fprintf(f, "sdswarm_resident_memory_bytes %" PRIu64 "\n", rss_bytes());
	metric_head(f, "sdswarm_luns", "gauge", "LUNs present.");
	fprintf(f, "sdswarm_luns %" PRIu32 "\n", lun_count(t));
	metric_head(f, "sdswarm_luns_max", "gauge",
		    "LUNs the table can hold (max_luns).");
	fprintf(f, "sdswarm_luns_max %" PRIu32 "\n", max);
	metric_head(f, "sdswarm_lun_state", "gauge", "Present LUNs by state.");
	for (i = LUN_ONLINE; i <= LUN_SANITIZING; i++)
		fprintf(f, "sdswarm_lun_state{state=\"%s\"} %" PRIu64 "\n",
			state_names[i], states[i]);
	metric_head(f, "sdswarm_lun_table_bytes", "gauge",
		    "Memory of the LUN table.");
	fprintf(f, "sdswarm_lun_table_bytes %zu\n", lun_table_bytes(t));
	metric_head(f, "sdswarm_store_data_bytes", "gauge",
		    "Data bytes the store holds.");
	fprintf(f, "sdswarm_store_data_bytes %" PRIu64 "\n", ss.data_bytes);
	metric_head(f, "sdswarm_store_metadata_bytes", "gauge",
		    "Bytes of the store's own bookkeeping.");
	fprintf(f, "sdswarm_store_metadata_bytes %" PRIu64 "\n", ss.meta_bytes);
	metric_head(f, "sdswarm_store_limit_hits", "counter",
		    "Writes refused by the store's mem_limit.");
	fprintf(f, "sdswarm_store_limit_hits_total %" PRIu64 "\n",
		ss.limit_hits);
	metric_head(f, "sdswarm_store_io_errors", "counter",
		    "I/O errors of the file store.");
	fprintf(f, "sdswarm_store_io_errors_total %" PRIu64 "\n", ss.io_errors);

	metric_ops(
		f, sum, "sdswarm_scsi_commands", 0,
		"SCSI commands completed, by opcode (the front ends that count: iSCSI, TCMU).");
	metric_ops(
		f, sum, "sdswarm_scsi_command_errors", 1,
		"SCSI commands that ended with a status other than GOOD, by opcode.");
	metric_ops(
		f, sum, "sdswarm_scsi_data_bytes", 2,
		"Bytes moved by SCSI commands (Data-In and Data-Out), by opcode.");
	metric_head(
		f, "sdswarm_scsi_latency_seconds", "histogram",
		"Time scsi_exec() took to execute a command: the emulation only, no transport time, no injected delay; log2 buckets, no _sum kept.");
	metric_histogram(f, "sdswarm_scsi_latency_seconds", sum->lat);
	metric_head(f, "sdswarm_faults_fired", "counter",
		    "Injected faults that fired.");
	fprintf(f, "sdswarm_faults_fired_total %" PRIu64 "\n",
		fault_total_hits(r->s->ctx.target->faults));
	metric_file(
		f, "sdswarm_fuse_requests", fs->count,
		"FUSE data requests answered, by kind (read, write, fallocate, fsync).");
	metric_file(f, "sdswarm_fuse_request_errors", fs->errors,
		    "FUSE data requests answered with an error, by kind.");
	metric_file(
		f, "sdswarm_fuse_data_bytes", fs->bytes,
		"Bytes FUSE requests read, wrote or (fallocate) punched or zeroed, by kind.");
	metric_head(
		f, "sdswarm_fuse_latency_seconds", "histogram",
		"Time a FUSE data request took from its handler receiving it to the reply, fault delays included; log2 buckets, no _sum kept.");
	metric_histogram(f, "sdswarm_fuse_latency_seconds", fs->lat);
	fputs("# EOF\n", f);
	free(snap);
	if (fclose(f) || !text) {
		free(text);
		return fail(r, "out of memory");
	}
	json_object_set_new(r->reply, "text", json_stringn(text, len));
	free(text);
	return 0;
}

/* ---- sessions ----------------------------------------------------------- */

static json_t *session_json(const struct target_session *cs)
{
	json_t *o = json_object();

	json_object_set_new(o, "transport", json_string(cs->transport));
	json_object_set_new(o, "initiator", json_string(cs->initiator));
	json_object_set_new(o, "target", json_string(cs->target));
	json_object_set_new(o, "peer", json_string(cs->peer));
	json_object_set_new(o, "portal", json_string(cs->portal));
	json_object_set_new(o, "isid", json_string(cs->isid));
	set_u64(o, "tsih", cs->tsih);
	json_object_set_new(o, "discovery", json_boolean(cs->discovery));
	json_object_set_new(o, "header_digest",
			    json_string(cs->header_digest ? "CRC32C" : "None"));
	json_object_set_new(o, "data_digest",
			    json_string(cs->data_digest ? "CRC32C" : "None"));
	set_u64(o, "connections", cs->connections);
	set_u64(o, "inflight", cs->inflight);
	set_u64(o, "age_s", cs->age_ns / 1000000000u);
	return o;
}

/*
 * sessions: the iSCSI sessions (initiator, target, addresses, digests,
 * commands in flight) and the FUSE mount (the kernel is its one client)
 * with its requests in flight. TCMU has none to list: LIO on the host is
 * its only initiator, and its commands are in stats.
 */
static int cmd_sessions(struct req *r)
{
	static const char *const fields[] = {"cmd", NULL};
	const struct cfg *cfg = r->s->ctx.cfg;
	struct target_snapshot *snap;
	struct target_session *v;
	json_t *arr, *o;
	int i, n;

	if (check_fields(r, "sessions", fields))
		return -1;
	snap = malloc(sizeof(*snap));
	n = target_sessions(r->s->ctx.target, &v);
	if (!snap || n < 0) {
		free(snap);
		return fail(r, "out of memory");
	}
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, session_json(&v[i]));
	free(v);
	json_object_set_new(r->reply, "sessions", arr);
	target_snapshot(r->s->ctx.target, snap, TARGET_KIND(TARGET_SRC_FILE));
	if (snap->sources[TARGET_SRC_FILE] && cfg->fuse.enabled) {
		o = json_object();
		json_object_set_new(o, "mountpoint",
				    json_string(cfg->fuse.mountpoint));
		set_u64(o, "inflight", snap->file.inflight);
		json_object_set_new(r->reply, "fuse", o);
	} else {
		json_object_set_new(r->reply, "fuse", json_null());
	}
	free(snap);
	return 0;
}

/* ---- save-config -------------------------------------------------------- */

/* A group's LUNs while save-config walks the table: its range.N lines. */
struct save_group {
	FILE *f;
	char *text;
	size_t len;
	unsigned int n; /* range.N lines so far */
	bool open;
	uint32_t first, last;
	enum lun_state state;
	uint64_t nblocks;
};

/* One range.N line: LUNs first..last alike (size, state). */
static void save_range(struct save_group *sg, const struct lun_group *g)
{
	uint64_t bytes = sg->nblocks * g->block_size;
	char size[24];

	fprintf(sg->f, "range.%u = %" PRIu32, ++sg->n, sg->first);
	if (sg->last != sg->first)
		fprintf(sg->f, "-%" PRIu32, sg->last);
	if (bytes != g->size) {
		cfg_format_size(bytes, size, sizeof(size));
		fprintf(sg->f, " size=%s", size);
	}
	if (sg->state == LUN_OFFLINE)
		fputs(" offline", sg->f);
	fputc('\n', sg->f);
}

/*
 * Every group's present LUNs as range.N lines into @sg[group]: one pass,
 * O(LUNs), one pin each, as status. Return: the LUNs, or -ENOMEM.
 */
static int64_t save_ranges(struct lun_table *t, struct save_group *sg)
{
	uint32_t max = lun_max(t);
	const struct lun_group *g;
	struct save_group *s;
	struct lun_info li;
	enum lun_state st;
	int64_t n = 0;
	int l, gi;

	lun_for_each(t, l, 0, max - 1) {
		if (lun_get(t, (uint32_t)l, &li))
			continue;
		gi = group_index(t, li.group);
		/*
		 * A state the host set (stopped, not ready, no medium) or a
		 * sanitize in progress is not kept: a start is a power on.
		 */
		st = li.state == LUN_OFFLINE ? LUN_OFFLINE : LUN_ONLINE;
		if (gi < 0) {
			lun_put(t, &li);
			continue;
		}
		s = &sg[gi];
		g = li.group;
		if (!s->f) {
			s->f = open_memstream(&s->text, &s->len);
			if (!s->f) {
				lun_put(t, &li);
				return -ENOMEM;
			}
		}
		if (s->open && (uint32_t)l == s->last + 1 && st == s->state &&
		    li.nblocks == s->nblocks) {
			s->last = (uint32_t)l;
		} else {
			if (s->open)
				save_range(s, g);
			s->open = true;
			s->first = s->last = (uint32_t)l;
			s->state = st;
			s->nblocks = li.nblocks;
		}
		n++;
		lun_put(t, &li);
	}
	for (gi = 0; (g = lun_group_get(t, (unsigned int)gi)); gi++)
		if (sg[gi].open)
			save_range(&sg[gi], g);
	return n;
}

/*
 * save-config: the running LUN table, groups, fault rules and ALUA states
 * as a configuration that reproduces them (the store's data excepted), in
 * "text" of the reply; `sdswarm save-config FILE` writes it.
 */
static int cmd_save_config(struct req *r)
{
	static const char *const fields[] = {"cmd", NULL};
	struct lun_table *t = r->s->ctx.target->luns;
	const struct cfg *cfg = r->s->ctx.cfg;
	const struct scsi_alua *a =
		r->s->ctx.target->scsi ? r->s->ctx.target->scsi->alua : NULL;
	struct fault_rule one, *rules = NULL;
	const struct lun_group *g;
	struct save_group *sg;
	char *text = NULL, rule[FAULT_RULE_FORMAT_LEN];
	int64_t nluns;
	size_t len = 0;
	unsigned int i, port, sep;
	int nrules, ret = 0;
	FILE *f;

	if (check_fields(r, "save-config", fields))
		return -1;
	sg = calloc(LUN_MAX_GROUPS, sizeof(*sg));
	if (!sg)
		return fail(r, "out of memory");
	nrules = list_faults(r->s, &one, 1);
	if (nrules > 0) {
		rules = calloc((size_t)nrules, sizeof(*rules));
		if (!rules) {
			ret = fail(r, "out of memory");
			goto out_free;
		}
		nrules = list_faults(r->s, rules, (unsigned int)nrules);
	}
	nluns = save_ranges(t, sg);
	for (i = 0; i < LUN_MAX_GROUPS; i++)
		if (sg[i].f && fclose(sg[i].f))
			nluns = -ENOMEM;
	f = nluns < 0 ? NULL : open_memstream(&text, &len);
	if (!f) {
		ret = fail(r, "out of memory");
		goto out_free;
	}
	fprintf(f,
		"# Written by sdswarmd %s (pid %d) for `sdswarm save-config`:\n"
		"# the LUN table, groups, fault rules and ALUA states it was\n"
		"# running, from a configuration first read from %s.\n"
		"# Stored data is not part of it. See sdswarm.conf(5).\n\n",
		cli_version(), (int)getpid(),
		cfg->source[0] ? cfg->source : CFG_BUILTIN_NAME);
	fputs(cfg->settings ? cfg->settings : "", f);
	for (i = 0; (g = lun_group_get(t, i)); i++) {
		if (strcmp(g->name, "default") == 0)
			fputs("[luns]\n", f);
		else
			fprintf(f, "[luns.%s]\n", g->name);
		fprintf(f, "first = %" PRIu32 "\ncount = 0\n", g->first);
		if (i < cfg->ngroups && cfg->group_settings)
			fputs(cfg->group_settings[i], f);
		if (sg[i].text)
			fwrite(sg[i].text, 1, sg[i].len, f);
		fputc('\n', f);
	}
	if (nrules > 0) {
		fputs("[faults]\n", f);
		for (i = 0; i < (unsigned int)nrules; i++) {
			fault_rule_format(&rules[i], rule, sizeof(rule));
			fprintf(f, "fault.%u = %s\n", i + 1, rule);
		}
		fputc('\n', f);
	}
	for (i = 0; a && i < a->ngroups; i++) {
		fprintf(f, "[port_group.%s]\nid = %u\nstate = %s\nports = ",
			a->groups[i].name, a->groups[i].id,
			scsi_alua_state_name(__atomic_load_n(
				&a->groups[i].state, __ATOMIC_RELAXED)));
		for (port = 1, sep = 0; port <= a->nports; port++)
			if (a->port_group[port - 1] == i)
				fprintf(f, "%s%u", sep++ ? ", " : "", port);
		fputs("\n\n", f);
	}
	if (fclose(f) || !text) {
		ret = fail(r, "out of memory");
		goto out_free;
	}
	json_object_set_new(r->reply, "text", json_stringn(text, len));
	set_u64(r->reply, "luns", (uint64_t)nluns);
	set_u64(r->reply, "faults", nrules > 0 ? (uint64_t)nrules : 0);
out_free:
	for (i = 0; i < LUN_MAX_GROUPS; i++)
		free(sg[i].text);
	free(sg);
	free(rules);
	free(text);
	return ret;
}

/* Appends up to one batch of names; ends the reply after the last one. */
static void names_batch(struct ctl_server *s, struct ctl_client *c)
{
	struct names_cursor *nc = &c->names;
	struct lun_table *t = s->ctx.target->luns;
	const char *prefix = s->ctx.cfg->target.name_prefix;
	uint32_t max = lun_max(t), dev;
	char name[SDNUM_NAME_MAX];
	unsigned int i;
	int l;

	for (i = 0; i < CTL_NAMES_BATCH && nc->left && !c->oom; i++) {
		l = lun_find(t, nc->next_lun, max - 1);
		if (l < 0) {
			nc->left = 0;
			break;
		}
		if (sdnum_name(prefix, nc->index, name, sizeof(name)) < 0)
			strcpy(name, "?");
		out_printf(c, "%s{\"lun\":%d,\"index\":%u,\"name\":\"%s\",",
			   nc->sent ? "," : "", l, nc->index, name);
		if (nc->scheme->encode(NULL, nc->index, 0, &dev) == 0)
			out_printf(c, "\"devt\":\"%u:%u\"}", SDNUM_MAJOR(dev),
				   SDNUM_MINOR(dev));
		else
			out_printf(c, "\"devt\":null}");
		nc->next_lun = (uint32_t)l + 1;
		nc->index++;
		nc->left--;
		nc->sent++;
	}
	if (!nc->left) {
		out_printf(c, "],\"count\":%" PRIu64 "}\n", nc->sent);
		nc->active = false;
	}
}

static int cmd_names(struct req *r)
{
	static const char *const fields[] = {"cmd",   "scheme", "order",
					     "first", "count",	NULL};
	struct lun_table *t = r->s->ctx.target->luns;
	struct names_cursor *nc = &r->c->names;
	const struct sdnum_scheme *scheme = r->s->ctx.cfg->target.scheme;
	const char *sname = NULL, *order = NULL;
	uint32_t max = lun_max(t), total = lun_count(t);
	uint64_t first = 0, count = UINT32_MAX, k;
	uint32_t from = 0;
	int l;

	if (check_fields(r, "names", fields))
		return -1;
	if (get_str(r, "scheme", &sname) < 0 || get_str(r, "order", &order) < 0)
		return -1;
	if (sname) {
		scheme = sdnum_scheme_find(sname);
		if (!scheme)
			return fail(
				r,
				"unknown scheme \"%s\" (legacy, naive, wilcox, linux, dynamic)",
				sname);
	}
	if (order && strcmp(order, "lun") != 0)
		return fail(
			r,
			"\"order\" must be \"lun\" (LUN order is the order the kernel probes them in)");
	if (get_uint(r, "first", UINT32_MAX, &first) < 0 ||
	    get_uint(r, "count", UINT32_MAX, &count) < 0)
		return -1;
	/* skip @first present LUNs: O(first), a millisecond at 262,144 */
	for (k = 0; k < first && from < max; k++) {
		l = lun_find(t, from, max - 1);
		if (l < 0)
			break;
		from = (uint32_t)l + 1;
	}
	memset(nc, 0, sizeof(*nc));
	nc->active = true;
	nc->scheme = scheme;
	nc->next_lun = k < first ? max : from;
	nc->index = (uint32_t)first;
	nc->left = first < total ? count : 0;
	out_printf(
		r->c,
		"{\"ok\":true,\"scheme\":\"%s\",\"prefix\":\"%s\",\"order\":\"lun\",\"first\":%" PRIu64
		",\"total\":%u,\"names\":[",
		scheme->name, r->s->ctx.cfg->target.name_prefix, first, total);
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(struct req *r);
} commands[] = {
	{"status", cmd_status},	    {"lun", cmd_lun},
	{"fault", cmd_fault},	    {"stats", cmd_stats},
	{"names", cmd_names},	    {"metrics", cmd_metrics},
	{"alua", cmd_alua},	    {"save-config", cmd_save_config},
	{"sessions", cmd_sessions},
};

#define CMD_LIST                                                               \
	"status, lun, fault, stats, names, metrics, alua, save-config, "       \
	"sessions"

static void dispatch(struct ctl_server *s, struct ctl_client *c,
		     const char *line, size_t len)
{
	struct req r = {.s = s, .c = c};
	json_error_t jerr;
	const char *cmd;
	unsigned int i;
	json_t *v;
	int ret;

	while (len && line[len - 1] == '\r')
		len--;
	if (!len) {
		send_error(
			c,
			"empty request: send one JSON object per line, like {\"cmd\":\"status\"}");
		return;
	}
	r.j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r.j) {
		send_error(c, "not JSON: %s (line 1, column %d)", jerr.text,
			   jerr.column);
		return;
	}
	if (!json_is_object(r.j)) {
		send_error(
			c,
			"a request is a JSON object, like {\"cmd\":\"status\"}");
		goto out;
	}
	v = json_object_get(r.j, "cmd");
	if (!json_is_string(v)) {
		send_error(c, "\"cmd\" is required: a string (" CMD_LIST ")");
		goto out;
	}
	cmd = json_string_value(v);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			break;
	if (i == ARRAY_SIZE(commands)) {
		send_error(c, "unknown cmd \"%.64s\" (" CMD_LIST ")", cmd);
		goto out;
	}
	r.reply = json_object();
	if (!r.reply) {
		send_error(c, "out of memory");
		goto out;
	}
	json_object_set_new(r.reply, "ok", json_true());
	ret = commands[i].fn(&r);
	if (ret < 0) {
		json_decref(r.reply);
		send_error(c, "%s", r.err);
	} else if (ret == 0) {
		send_json(c, r.reply);
	} else {
		json_decref(
			r.reply); /* streaming: the handler wrote a header */
	}
out:
	json_decref(r.j);
}

/* ---- the event loop side ------------------------------------------------ */

static void client_free(struct ctl_client *c)
{
	free(c->in);
	free(c->out);
	free(c);
}

/* The tick runs while there is something to time: a paused listener. */
static void timer_update(struct ctl_server *s)
{
	struct itimerspec its = {0};
	bool want = s->accept_paused || (s->nclients && s->ctx.idle_timeout);

	if (want == s->timer_armed)
		return;
	if (want) {
		its.it_value.tv_sec = 1;
		its.it_interval.tv_sec = 1;
	}
	if (timerfd_settime(s->tfd, 0, &its, NULL) == 0)
		s->timer_armed = want;
	else
		log_warn("control: timer: %s", strerror(errno));
}

static void client_close(struct ctl_server *s, struct ctl_client *c)
{
	unsigned int i;

	for (i = 0; i < s->nclients; i++) {
		if (s->clients[i] == c) {
			s->clients[i] = s->clients[--s->nclients];
			break;
		}
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	client_free(c);
	timer_update(s);
}

static void set_interest(struct ctl_server *s, struct ctl_client *c,
			 uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = c};

	if (events == c->events)
		return;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = events;
}

/* Writes what it can. Return: 1 all written, 0 would block, -1 broken. */
static int flush_out(struct ctl_client *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->out_off += (size_t)n;
			c->active_ns = now_ns();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
	c->out_off = c->out_len = 0;
	return 1;
}

/* Reads what is there, up to a full line's room. Return: -1 broken. */
static int fill_in(struct ctl_client *c)
{
	size_t cap;
	ssize_t n;
	char *nb;

	while (c->in_len < IN_CAP && !c->eof) {
		if (c->in_len == c->in_cap) {
			cap = c->in_cap ? c->in_cap * 2 : 4096;
			if (cap > IN_CAP)
				cap = IN_CAP;
			nb = realloc(c->in, cap);
			if (!nb)
				return -1;
			c->in = nb;
			c->in_cap = cap;
		}
		n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
		if (n > 0) {
			c->in_len += (size_t)n;
			c->active_ns = now_ns();
			continue;
		}
		if (n == 0) {
			c->eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		return -1;
	}
	return 0;
}

/*
 * Moves a client along: write pending output, continue a names stream,
 * run the next buffered request, or wait. One request at a time, so
 * replies keep their order and a client holds at most one reply.
 * Return: false if the client was closed.
 */
static bool pump(struct ctl_server *s, struct ctl_client *c)
{
	char *nl;
	int ret;

	for (;;) {
		if (c->oom) {
			client_close(s, c);
			return false;
		}
		if (c->out_off < c->out_len) {
			ret = flush_out(c);
			if (ret < 0) {
				client_close(s, c);
				return false;
			}
			if (ret == 0) {
				set_interest(s, c, EPOLLOUT);
				return true;
			}
		}
		if (c->names.active) {
			while (c->names.active && c->out_len < OUT_LOW &&
			       !c->oom)
				names_batch(s, c);
			continue;
		}
		if (c->closing) {
			client_close(s, c);
			return false;
		}
		nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
		if (nl) {
			size_t len = (size_t)(nl - c->in);

			dispatch(s, c, c->in, len);
			memmove(c->in, nl + 1, c->in_len - len - 1);
			c->in_len -= len + 1;
			continue;
		}
		if (c->in_len >= IN_CAP) {
			send_error(c, "request longer than %d bytes; closing",
				   CTL_LINE_MAX);
			c->in_len = 0;
			c->closing = true;
			continue;
		}
		if (c->eof) {
			if (c->in_len) {
				/* a last request without its newline */
				dispatch(s, c, c->in, c->in_len);
				c->in_len = 0;
				continue;
			}
			client_close(s, c);
			return false;
		}
		set_interest(s, c, EPOLLIN);
		return true;
	}
}

/* Stops or resumes polling the listener. */
static void accept_pause(struct ctl_server *s, bool pause)
{
	struct epoll_event ev = {.events = pause ? 0 : EPOLLIN, .data.ptr = s};

	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &ev) < 0)
		log_warn("control: listener: %s", strerror(errno));
	else
		s->accept_paused = pause;
	timer_update(s);
}

static void accept_clients(struct ctl_server *s)
{
	static const char busy[] =
		"{\"ok\":false,\"error\":\"too many control clients; try again\"}\n";
	struct epoll_event ev = {.events = EPOLLIN};
	struct ctl_client *c;
	bool root;
	int fd;

	for (;;) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/*
			 * Out of descriptors or memory: the client stays
			 * queued and the listener readable, so epoll would
			 * wake at once, forever. Stop listening until the
			 * next tick; the client's connect waits in the
			 * backlog.
			 */
			log_warn(
				"control: accept: %s; not accepting for a second",
				strerror(errno));
			accept_pause(s, true);
			return;
		}
		root = peer_uid(fd) == 0;
		if (s->nclients >=
		    CTL_MAX_CLIENTS + (root ? CTL_ROOT_CLIENTS : 0)) {
			if (send(fd, busy, sizeof(busy) - 1,
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				log_debug("control: busy reply: %s",
					  strerror(errno));
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->events = EPOLLIN;
		c->root = root;
		c->active_ns = now_ns();
		ev.data.ptr = c;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		s->clients[s->nclients++] = c;
		timer_update(s);
	}
}

/*
 * Closes every client that has not sent or received a byte for the idle
 * timeout: 64 clients that connect and wait would otherwise hold every slot
 * for good. Each is told why, if its socket takes the line.
 */
static void close_idle(struct ctl_server *s)
{
	uint64_t now = now_ns(),
		 limit = (uint64_t)s->ctx.idle_timeout * 1000000000u;
	char msg[96];
	unsigned int i = s->nclients, closed = 0;
	int n;

	n = snprintf(msg, sizeof(msg),
		     "{\"ok\":false,\"error\":\"idle for %u s; closing\"}\n",
		     s->ctx.idle_timeout);
	while (i--) {
		struct ctl_client *c = s->clients[i];

		if (now - c->active_ns < limit)
			continue;
		if (c->out_off == c->out_len &&
		    send(c->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) <
			    0)
			log_debug("control: idle reply: %s", strerror(errno));
		client_close(s, c);
		closed++;
	}
	if (closed)
		log_info("control: closed %u client%s idle for %u s", closed,
			 closed == 1 ? "" : "s", s->ctx.idle_timeout);
}

static void tick(struct ctl_server *s)
{
	uint64_t expirations;

	if (read(s->tfd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		log_warn("control: timer: %s", strerror(errno));
	if (s->accept_paused)
		accept_pause(s, false);
	if (s->ctx.idle_timeout)
		close_idle(s);
}

int ctl_server_run(struct ctl_server *s)
{
	struct epoll_event evs[32];
	struct ctl_client *c;
	int n, i;

	n = epoll_wait(s->epfd, evs, 32, 0);
	for (i = 0; i < n; i++) {
		if (evs[i].data.ptr == s) {
			accept_clients(s);
			continue;
		}
		if (evs[i].data.ptr == &s->tfd) {
			tick(s);
			continue;
		}
		c = evs[i].data.ptr;
		if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
		    !(c->events & EPOLLOUT)) {
			if (fill_in(c) < 0) {
				client_close(s, c);
				continue;
			}
		}
		if ((evs[i].events & EPOLLERR) && !(evs[i].events & EPOLLIN)) {
			client_close(s, c);
			continue;
		}
		pump(s, c);
	}
	return n < 0 ? 0 : n;
}

void ctl_server_destroy(struct ctl_server *s)
{
	struct stat st;

	if (!s)
		return;
	while (s->nclients)
		client_close(s, s->clients[0]);
	close(s->tfd);
	close(s->epfd);
	close(s->lfd);
	/* unlink only our own socket: a new daemon may own the path now */
	if (stat(s->path, &st) == 0 && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		unlink(s->path);
	free(s);
}

int ctl_execute(struct ctl_server *s, const char *line, size_t len,
		char **reply)
{
	struct ctl_client c = {.fd = -1};

	dispatch(s, &c, line, len);
	while (c.names.active && !c.oom)
		names_batch(s, &c);
	if (c.oom || !c.out) {
		free(c.out);
		return -ENOMEM;
	}
	*reply = c.out;
	return 0;
}
