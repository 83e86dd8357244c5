// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench stress: a bounded CI stress run against a running sdswarmd,
 * with a verdict.
 *
 * For --seconds it runs verified I/O on many disks at once, through the
 * FUSE files (DIR) and/or an iSCSI target (--iscsi URL), while one thread
 * churns LUNs over the control socket (remove and add, resize, offline and
 * online) and another injects faults (medium errors, delays, unit
 * attentions) and checks that the host sees each as the right error.
 * Every block written carries its LUN, its byte offset and a generation
 * and is filled from those, so a read proves which write it returns; a
 * block never written since its LUN was (re)created must read as zeros
 * (block 0, which holds the synthetic partition table, as anything but a
 * stamp). It watches the daemon too: its RSS after every written LUN was
 * removed again, and its open descriptors.
 *
 * Each disk has a lock. The I/O workers hold it for one write or one
 * read-and-check, the churn and fault threads for a whole change and the
 * checks around it, so every expectation is exact: a block lost, a stale
 * name, a wrong answer to a fault is a failure, never noise. The run ends
 * with a final read of every block, a table, and exit status 1 on any
 * loss, unexpected error or warning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <jansson.h>

#include "array.h"
#include "bench.h"
#include "rng.h"
#include "sdnum.h"

#define ST_BLOCK 4096u
#define ST_MAGIC 0x5344535753545253ull /* "SDSWSTRS" */
#define ST_MAX_DISKS 4096u
#define ST_MAX_BLOCKS 4096u
#define ST_MAX_WORKERS 64u
#define ST_MAX_SECONDS 86400ull
#define ST_DELAY_MS 50u
#define ST_REPORT_MAX 10u
#define ST_HANG_RELEASE_S 30u /* a hung read must be let go within this */

enum st_path { ST_FUSE, ST_ISCSI };

/* What the churn thread may do to a LUN (--churn). */
enum st_churn {
	ST_CHURN_REMOVE,
	ST_CHURN_RESIZE,
	ST_CHURN_OFFLINE,
	ST_CHURN_KINDS
};
static const char *const st_churn_names[ST_CHURN_KINDS] = {"remove", "resize",
							   "offline"};

struct st_disk {
	pthread_mutex_t lock;
	uint32_t lun;
	char name[32];
	uint64_t bytes;
	uint32_t lbsize; /* iSCSI: the LUN's logical block */
	uint64_t *gen; /* per block; 0 = not written since (re)creation */
	bool written;
};

struct st_iscsi {
	struct iscsi_context *ctx;
};

struct st_run {
	const char *dir;
	const char *control;
	char portal[256];
	char target[256];
	bool use_fuse, use_iscsi;
	bool direct; /* --direct: O_DIRECT on DIR's files */
	unsigned int churn_kinds; /* bit per enum st_churn */
	unsigned int ndisks, nblocks, workers;
	uint64_t seconds, churn_ms, fault_ms, hang_ms, seed, rss_slack_mib;
	uint64_t progress_s; /* --progress: a line on stderr every S; 0 none */
	struct st_disk *disks;
	uint64_t deadline_ns;
	atomic_uint_fast64_t next_gen;
	atomic_bool stop;
	pid_t daemon_pid;
	int ctl_fd;
	pthread_mutex_t ctl_lock;
	/* counters */
	atomic_uint_fast64_t writes, reads, verified, lost, errors;
	atomic_uint_fast64_t removes, resizes, offlines, stale;
	atomic_uint_fast64_t faults, faults_right, faults_wrong;
	atomic_uint_fast64_t hangs, hangs_held, hangs_released;
	atomic_uint_fast64_t hangs_aborted; /* released through ABORT TASK */
	atomic_uint_fast64_t reported;
	/* the harness's own bookkeeping found wrong: no verdict (exit 3) */
	atomic_uint_fast64_t broken;
};

static int st_log_problem(struct st_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int st_log_problem(struct st_run *r, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&r->reported, 1) >= ST_REPORT_MAX)
		return 0;
	va_start(ap, fmt);
	fputs("stress: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 0;
}

/* ---- the stamp -------------------------------------------------------- */

static void st_stamp(uint8_t *buf, uint32_t lun, uint64_t off, uint64_t gen)
{
	uint64_t *w = (uint64_t *)buf;
	struct rng s = rng_init(rng_mix64(lun ^ off * 31 ^ gen << 20));
	size_t i;

	w[0] = ST_MAGIC;
	w[1] = lun;
	w[2] = off;
	w[3] = gen;
	for (i = 4; i < ST_BLOCK / 8; i++)
		w[i] = rng_next(&s);
}

static bool st_is_stamp(const uint8_t *buf)
{
	uint64_t magic;

	memcpy(&magic, buf, sizeof(magic));
	return magic == ST_MAGIC;
}

static bool st_is_zero(const uint8_t *buf)
{
	size_t i;

	for (i = 0; i < ST_BLOCK; i++)
		if (buf[i])
			return false;
	return true;
}

/* Byte offset of block @k of @d: spread over the disk, block 0 at 0. */
static uint64_t st_off(const struct st_run *r, const struct st_disk *d,
		       unsigned int k)
{
	uint64_t nblk = d->bytes / ST_BLOCK;

	return (uint64_t)k * (nblk / r->nblocks) * ST_BLOCK;
}

/*
 * Checks what block @k of @d read as against what the run wrote there.
 * Return: true when it is right.
 */
static bool st_check(struct st_run *r, struct st_disk *d, unsigned int k,
		     const uint8_t *buf, const char *via)
{
	static __thread uint8_t want[ST_BLOCK];
	uint64_t off = st_off(r, d, k);
	uint64_t got[4];

	if (d->gen[k]) {
		st_stamp(want, d->lun, off, d->gen[k]);
		if (memcmp(buf, want, ST_BLOCK) == 0)
			return true;
		memcpy(got, buf, sizeof(got));
		if (got[0] == ST_MAGIC)
			st_log_problem(r,
				       "LOST: %s (LUN %u) offset %" PRIu64
				       " via %s: want generation %" PRIu64
				       ", read the stamp of LUN %" PRIu64
				       " offset %" PRIu64
				       " generation %" PRIu64,
				       d->name, d->lun, off, via, d->gen[k],
				       got[1], got[2], got[3]);
		else
			st_log_problem(
				r,
				"LOST: %s (LUN %u) offset %" PRIu64
				" via %s: want generation %" PRIu64
				", read no stamp (first bytes %016" PRIx64 ")",
				d->name, d->lun, off, via, d->gen[k], got[0]);
		return false;
	}
	if (k == 0 ? !st_is_stamp(buf) : st_is_zero(buf))
		return true;
	memcpy(got, buf, sizeof(got));
	st_log_problem(
		r,
		"LOST: %s (LUN %u) offset %" PRIu64
		" via %s: never written since it was created, yet it reads as %s (first bytes %016" PRIx64
		")",
		d->name, d->lun, off, via,
		st_is_stamp(buf) ? "an old stamp" : "non-zero bytes", got[0]);
	return false;
}

/* ---- the control socket ----------------------------------------------- */

static int st_ctl_open(struct st_run *r)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(r->control) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, r->control);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	r->ctl_fd = fd;
	return 0;
}

/*
 * The daemon closes a control connection idle for [target]
 * control_idle_timeout seconds (30 by default), with a last line
 * {"ok":false,"error":"idle for N s; closing"}; under TCG or on a loaded
 * machine the disk set-up before the first request, or the gap between
 * two, can take longer. Before a request: whatever the daemon sent
 * unasked is read and dropped, and a connection it closed (EOF, or its
 * closing line) is opened again. Called with ctl_lock held. Return: 0,
 * or -errno of the new connection.
 */
static int st_ctl_fresh(struct st_run *r)
{
	char buf[512];
	bool closed = r->ctl_fd < 0;
	ssize_t got;

	while (!closed) {
		got = recv(r->ctl_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (got > 0) {
			buf[got] = '\0';
			closed = strstr(buf, "closing") != NULL;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0; /* open and quiet: the usual case */
		closed = true; /* EOF or an error */
	}
	if (r->ctl_fd >= 0)
		close(r->ctl_fd);
	r->ctl_fd = -1;
	return st_ctl_open(r);
}

/*
 * One request, one reply. Return: the reply object when it says ok (the
 * caller frees it), NULL otherwise with @err filled.
 */
static json_t *st_ctl(struct st_run *r, json_t *req, char *err, size_t len)
{
	char *text, line[65536];
	size_t have = 0, n;
	json_error_t jerr;
	json_t *reply = NULL, *e;
	bool retried = false;
	ssize_t got;

	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	n = strlen(text);
	text[n++] = '\n';
	pthread_mutex_lock(&r->ctl_lock);
again:
	got = st_ctl_fresh(r);
	if (got < 0) {
		snprintf(err, len, "connecting to the control socket again: %s",
			 strerror((int)-got));
		goto out;
	}
	for (size_t off = 0; off < n;) {
		/* MSG_NOSIGNAL: a daemon gone is an error to report, not a
		 * SIGPIPE that ends the run without a word */
		got = send(r->ctl_fd, text + off, n - off, MSG_NOSIGNAL);
		if (got < 0 && errno == EINTR)
			continue;
		/* closed as idle between the check and the send: nothing of
		 * the request was taken; once more on a new connection */
		if (got < 0 && (errno == EPIPE || errno == ECONNRESET) &&
		    !off && !retried) {
			retried = true;
			close(r->ctl_fd);
			r->ctl_fd = -1;
			goto again;
		}
		if (got <= 0) {
			snprintf(err, len, "writing to the control socket: %s",
				 strerror(errno));
			goto out;
		}
		off += (size_t)got;
	}
	while (!memchr(line, '\n', have)) {
		if (have == sizeof(line)) {
			snprintf(err, len, "a reply longer than %zu bytes",
				 sizeof(line));
			goto out;
		}
		got = read(r->ctl_fd, line + have, sizeof(line) - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			snprintf(err, len, "the control socket closed");
			goto out;
		}
		have += (size_t)got;
	}
	reply = json_loadb(line,
			   (size_t)((char *)memchr(line, '\n', have) - line), 0,
			   &jerr);
	if (!reply) {
		snprintf(err, len, "a reply that is no JSON: %s", jerr.text);
	} else if (!json_is_true(json_object_get(reply, "ok"))) {
		e = json_object_get(reply, "error");
		snprintf(err, len, "%s",
			 json_is_string(e) ? json_string_value(e) : "refused");
		json_decref(reply);
		reply = NULL;
	}
out:
	pthread_mutex_unlock(&r->ctl_lock);
	free(text);
	return reply;
}

static uint64_t st_json_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

/* The daemon's RSS in bytes, or 0 when it cannot be asked. */
static uint64_t st_daemon_rss(struct st_run *r)
{
	char err[256];
	json_t *s = st_ctl(r, json_pack("{s:s}", "cmd", "status"), err,
			   sizeof(err));
	uint64_t v;

	if (!s)
		return 0;
	v = st_json_u64(s, "rss_bytes");
	if (!r->daemon_pid)
		r->daemon_pid = (pid_t)st_json_u64(s, "pid");
	json_decref(s);
	return v;
}

/*
 * Open descriptors of the daemon, or -1 when /proc does not tell. Clones
 * of /dev/fuse are left out: libfuse opens one per worker thread as load
 * makes it start threads (bounded by its max_threads), which is no leak.
 */
static long st_daemon_fds(const struct st_run *r)
{
	char path[300], target[64];
	struct dirent *de;
	long n = 0;
	ssize_t len;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)r->daemon_pid);
	dir = r->daemon_pid ? opendir(path) : NULL;
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s",
			 (int)r->daemon_pid, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			if (strcmp(target, "/dev/fuse") == 0)
				continue;
		}
		n++;
	}
	closedir(dir);
	return n;
}

/* ---- I/O through either path ------------------------------------------ */

static int st_fuse_io(struct st_run *r, struct st_disk *d, uint64_t off,
		      uint8_t *buf, bool write)
{
	char path[4096];
	ssize_t n;
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/%s", r->dir, d->name);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC |
				(r->direct ? O_DIRECT : 0));
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, ST_BLOCK, (off_t)off)
		  : pread(fd, buf, ST_BLOCK, (off_t)off);
	if (n < 0)
		e = -errno;
	else if (n != ST_BLOCK)
		e = -EIO;
	if (write && !e && fdatasync(fd) < 0)
		e = -errno;
	close(fd);
	return e;
}

/*
 * One READ(16)/WRITE(16) of a block over iSCSI; a unit attention is
 * taken and the command sent again (a few times), as an initiator does.
 * Return: 0, or -EIO with @sense (key << 16 | asc << 8 | ascq) set.
 */
static int st_iscsi_io(struct st_run *r, struct iscsi_context *ctx,
		       struct st_disk *d, uint64_t off, uint8_t *buf,
		       bool write, uint32_t *sense)
{
	int lun = d->lun < 256 ? (int)d->lun : (int)(0x4000 | d->lun);
	struct scsi_task *t;
	int tries, e = -EIO;

	(void)r;
	*sense = 0;
	for (tries = 0; tries < 4; tries++) {
		t = write ? iscsi_write16_sync(ctx, lun, off / d->lbsize, buf,
					       ST_BLOCK, (int)d->lbsize, 0, 0,
					       0, 0, 0)
			  : iscsi_read16_sync(ctx, lun, off / d->lbsize,
					      ST_BLOCK, (int)d->lbsize, 0, 0, 0,
					      0, 0);
		if (!t)
			return -ENOTCONN;
		if (t->status == SCSI_STATUS_GOOD) {
			if (!write) {
				if (t->datain.size == (int)ST_BLOCK)
					memcpy(buf, t->datain.data, ST_BLOCK);
				else
					e = -EIO;
			}
			if (write || t->datain.size == (int)ST_BLOCK)
				e = 0;
			scsi_free_scsi_task(t);
			return e;
		}
		*sense = (uint32_t)t->sense.key << 16 | (uint32_t)t->sense.ascq;
		scsi_free_scsi_task(t);
		if ((*sense >> 16) != SCSI_SENSE_UNIT_ATTENTION)
			break;
	}
	return -EIO;
}

static struct iscsi_context *st_iscsi_login(struct st_run *r, unsigned int id)
{
	char iqn[128];
	struct iscsi_context *ctx;

	snprintf(iqn, sizeof(iqn), "iqn.2026-12.org.sdswarm:stress-%d-%u",
		 (int)getpid(), id);
	ctx = iscsi_create_context(iqn);
	if (!ctx)
		return NULL;
	if (iscsi_set_targetname(ctx, r->target) ||
	    iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE)) {
		iscsi_destroy_context(ctx);
		return NULL;
	}
	iscsi_set_timeout(ctx, 30);
	if (iscsi_connect_sync(ctx, r->portal) || iscsi_login_sync(ctx)) {
		fprintf(stderr, "stress: iSCSI login to %s at %s: %s\n",
			r->target, r->portal, iscsi_get_error(ctx));
		iscsi_destroy_context(ctx);
		return NULL;
	}
	return ctx;
}

/* A block read and checked through @path; caller holds d->lock. */
static bool st_read_check(struct st_run *r, struct iscsi_context *ctx,
			  struct st_disk *d, unsigned int k, enum st_path path)
{
	uint8_t buf[ST_BLOCK] __attribute__((aligned(ST_BLOCK)));
	uint32_t sense;
	int e;

	e = path == ST_FUSE ? st_fuse_io(r, d, st_off(r, d, k), buf, false)
			    : st_iscsi_io(r, ctx, d, st_off(r, d, k), buf,
					  false, &sense);
	atomic_fetch_add(&r->reads, 1);
	if (e) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(
			r, "ERROR: reading %s offset %" PRIu64 " via %s: %s",
			d->name, st_off(r, d, k),
			path == ST_FUSE ? "file" : "iSCSI", strerror(-e));
		return false;
	}
	if (!st_check(r, d, k, buf, path == ST_FUSE ? "file" : "iSCSI")) {
		atomic_fetch_add(&r->lost, 1);
		return false;
	}
	atomic_fetch_add(&r->verified, 1);
	return true;
}

static bool st_write(struct st_run *r, struct iscsi_context *ctx,
		     struct st_disk *d, unsigned int k, enum st_path path)
{
	uint8_t buf[ST_BLOCK] __attribute__((aligned(ST_BLOCK)));
	uint64_t gen = atomic_fetch_add(&r->next_gen, 1);
	uint32_t sense;
	int e;

	st_stamp(buf, d->lun, st_off(r, d, k), gen);
	e = path == ST_FUSE ? st_fuse_io(r, d, st_off(r, d, k), buf, true)
			    : st_iscsi_io(r, ctx, d, st_off(r, d, k), buf, true,
					  &sense);
	atomic_fetch_add(&r->writes, 1);
	if (e) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(
			r, "ERROR: writing %s offset %" PRIu64 " via %s: %s",
			d->name, st_off(r, d, k),
			path == ST_FUSE ? "file" : "iSCSI", strerror(-e));
		return false;
	}
	d->gen[k] = gen;
	d->written = true;
	return true;
}

static enum st_path st_pick_path(const struct st_run *r, struct rng *rs)
{
	if (r->use_fuse && r->use_iscsi)
		return rng_next(rs) & 1 ? ST_FUSE : ST_ISCSI;
	return r->use_fuse ? ST_FUSE : ST_ISCSI;
}

static bool st_done(struct st_run *r)
{
	return atomic_load(&r->stop) || bench_now_ns() >= r->deadline_ns;
}

struct st_thread {
	struct st_run *r;
	unsigned int id;
	struct iscsi_context *ctx;
	pthread_t tid;
};

static void *st_worker(void *arg)
{
	struct st_thread *t = arg;
	struct st_run *r = t->r;
	struct rng rs = rng_init(r->seed ^ rng_mix64(t->id + 1));

	while (!st_done(r)) {
		struct st_disk *d = &r->disks[rng_below(&rs, r->ndisks)];
		unsigned int k = (unsigned int)rng_below(&rs, r->nblocks);
		enum st_path p = st_pick_path(r, &rs);

		pthread_mutex_lock(&d->lock);
		if (rng_below(&rs, 5) < 2)
			st_write(r, t->ctx, d, k, p);
		else
			st_read_check(r, t->ctx, d, k, p);
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

/* Sleeps @ms or until the run ends. */
static void st_nap(struct st_run *r, uint64_t ms)
{
	uint64_t end = bench_now_ns() + ms * 1000000ull;

	while (!st_done(r) && bench_now_ns() < end) {
		struct timespec ts = {0, 10 * 1000000L};

		nanosleep(&ts, NULL);
	}
}

/* Every written block of @d read and checked through every path. */
static void st_check_disk(struct st_run *r, struct iscsi_context *ctx,
			  struct st_disk *d)
{
	unsigned int k;

	for (k = 0; k < r->nblocks; k++) {
		if (r->use_fuse)
			st_read_check(r, ctx, d, k, ST_FUSE);
		if (r->use_iscsi && ctx)
			st_read_check(r, ctx, d, k, ST_ISCSI);
	}
}

static int st_lun_op(struct st_run *r, const char *op, uint32_t lun,
		     const char *size, json_t **reply)
{
	char err[512];
	json_t *req = json_pack("{s:s,s:s}", "cmd", "lun", "op", op), *rep;

	if (strcmp(op, "add") != 0)
		json_object_set_new(req, "lun", json_integer(lun));
	if (size)
		json_object_set_new(req, "size", json_string(size));
	rep = st_ctl(r, req, err, sizeof(err));
	if (!rep) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(r, "ERROR: lun %s %u: %s", op, lun, err);
		return -EIO;
	}
	if (reply)
		*reply = rep;
	else
		json_decref(rep);
	return 0;
}

/* What stat() says of @d's file: its size, or -errno. */
static int64_t st_stat(const struct st_run *r, const struct st_disk *d)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", r->dir, d->name);
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

		if (fd < 0)
			return -errno;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			e = -errno;
		close(fd);
		return e ? e : (int64_t)bytes;
	}
	return (int64_t)st.st_size;
}

/* Remove @d and add it back: its data is gone, its name comes back. */
static void st_churn_remove(struct st_run *r, struct st_disk *d)
{
	json_t *rep;
	int64_t sz;
	unsigned int k;

	if (st_lun_op(r, "remove", d->lun, NULL, NULL))
		return;
	if (r->use_fuse && (sz = st_stat(r, d)) != -ENOENT) {
		atomic_fetch_add(&r->stale, 1);
		st_log_problem(
			r,
			"STALE: %s still there after its LUN was removed (stat: %s)",
			d->name, sz < 0 ? strerror((int)-sz) : "found");
	}
	if (st_lun_op(r, "add", 0, NULL, &rep))
		return;
	if (st_json_u64(rep, "lun") != d->lun) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(
			r,
			"ERROR: LUN %u removed, but lun add gave LUN %" PRIu64
			" (the LUNs must be dense)",
			d->lun, st_json_u64(rep, "lun"));
	}
	json_decref(rep);
	for (k = 0; k < r->nblocks; k++)
		d->gen[k] = 0;
	if (r->use_fuse && (sz = st_stat(r, d)) != (int64_t)d->bytes) {
		atomic_fetch_add(&r->stale, 1);
		st_log_problem(r, "STALE: %s after lun add: %s", d->name,
			       sz < 0 ? strerror((int)-sz) : "another size");
	}
	atomic_fetch_add(&r->removes, 1);
}

/* Grow @d by 1 MiB and shrink it back; its blocks must not move. */
static void st_churn_resize(struct st_run *r, struct iscsi_context *ctx,
			    struct st_disk *d)
{
	char size[32];
	int64_t sz;

	snprintf(size, sizeof(size), "%" PRIu64, d->bytes + (1u << 20));
	if (st_lun_op(r, "resize", d->lun, size, NULL))
		return;
	if (r->use_fuse &&
	    (sz = st_stat(r, d)) != (int64_t)(d->bytes + (1u << 20))) {
		atomic_fetch_add(&r->stale, 1);
		st_log_problem(r,
			       "STALE: %s is %" PRId64
			       " bytes after a resize to %s",
			       d->name, sz, size);
	}
	st_check_disk(r, ctx, d);
	snprintf(size, sizeof(size), "%" PRIu64, d->bytes);
	st_lun_op(r, "resize", d->lun, size, NULL);
	if (r->use_fuse && (sz = st_stat(r, d)) != (int64_t)d->bytes) {
		atomic_fetch_add(&r->stale, 1);
		st_log_problem(r,
			       "STALE: %s is %" PRId64
			       " bytes after a resize back to %s",
			       d->name, sz, size);
	}
	atomic_fetch_add(&r->resizes, 1);
}

/* Offline: reads fail; online again: every block as it was. */
static void st_churn_offline(struct st_run *r, struct iscsi_context *ctx,
			     struct st_disk *d)
{
	uint8_t buf[ST_BLOCK] __attribute__((aligned(ST_BLOCK)));
	uint32_t sense;
	int e;

	if (st_lun_op(r, "offline", d->lun, NULL, NULL))
		return;
	if (r->use_fuse) {
		e = st_fuse_io(r, d, 0, buf, false);
		if (!e) {
			atomic_fetch_add(&r->errors, 1);
			st_log_problem(
				r,
				"WRONG: %s read through its file while its LUN was offline",
				d->name);
		}
	}
	if (r->use_iscsi && ctx) {
		e = st_iscsi_io(r, ctx, d, 0, buf, false, &sense);
		if (!e || (sense >> 16) != SCSI_SENSE_NOT_READY) {
			atomic_fetch_add(&r->errors, 1);
			st_log_problem(
				r,
				"WRONG: %s over iSCSI while offline: sense %06x, want NOT READY",
				d->name, sense);
		}
	}
	st_lun_op(r, "online", d->lun, NULL, NULL);
	st_check_disk(r, ctx, d);
	atomic_fetch_add(&r->offlines, 1);
}

static void *st_churner(void *arg)
{
	struct st_thread *t = arg;
	struct st_run *r = t->r;
	struct rng rs = rng_init(r->seed ^ 0xc4u);

	for (;;) {
		st_nap(r, r->churn_ms);
		if (st_done(r))
			break;
		struct st_disk *d = &r->disks[rng_below(&rs, r->ndisks)];

		pthread_mutex_lock(&d->lock);
		unsigned int kind;

		do
			kind = (unsigned int)rng_below(&rs, ST_CHURN_KINDS);
		while (!(r->churn_kinds & 1u << kind));
		switch (kind) {
		case ST_CHURN_REMOVE:
			st_churn_remove(r, d);
			break;
		case ST_CHURN_RESIZE:
			st_churn_resize(r, t->ctx, d);
			break;
		default:
			st_churn_offline(r, t->ctx, d);
			break;
		}
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

/*
 * A hang: a read of block @k that a "hang ops=read" rule holds. The rule
 * stands for --hang-ms while the read must stay unanswered, then it is
 * cleared, and the host must end the hang as it would:
 *   FUSE   the held request goes ahead once its rule is gone: the read
 *          returns the block (within ST_HANG_RELEASE_S);
 *   iSCSI  the target keeps a hung command until it is aborted, as a
 *          disk that lost it would: the initiator sends ABORT TASK, which
 *          must come back FUNCTION COMPLETE, and the read sent again
 *          returns the block.
 * Counted in hangs (injected), hangs_held (unanswered while the rule
 * stood) and hangs_released (ended as above with the right bytes); any
 * other outcome is a wrong fault answer.
 */
struct st_hang_read {
	uint8_t buf[ST_BLOCK]; /* first: aligned for O_DIRECT */
	struct st_run *r;
	struct st_disk *d;
	uint64_t off;
	int err;
	atomic_bool done;
	atomic_int refs; /* the reader's and the waiter's */
};

static void st_hang_put(struct st_hang_read *h)
{
	/* acq_rel: the last one out sees every write of the other */
	if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) == 1)
		free(h);
}

static void *st_hang_reader(void *arg)
{
	struct st_hang_read *h = arg;

	h->err = st_fuse_io(h->r, h->d, h->off, h->buf, false);
	/* release: buf and err are there before done says so */
	atomic_store_explicit(&h->done, true, memory_order_release);
	st_hang_put(h);
	return NULL;
}

/* Waits up to @ms for @done; true when it came. */
static bool st_wait_flag(atomic_bool *done, uint64_t ms)
{
	uint64_t end = bench_now_ns() + ms * 1000000ull;

	while (!atomic_load_explicit(done, memory_order_acquire)) {
		if (bench_now_ns() >= end)
			return false;
		struct timespec ts = {0, 5 * 1000000L};

		nanosleep(&ts, NULL);
	}
	return true;
}

struct st_iscsi_wait {
	bool done;
	int status;
	uint32_t tmf_response;
	bool tmf;
};

static void st_iscsi_cb(struct iscsi_context *ctx, int status,
			void *command_data, void *private_data)
{
	struct st_iscsi_wait *w = private_data;

	(void)ctx;
	w->done = true;
	w->status = status;
	if (w->tmf && status == SCSI_STATUS_GOOD && command_data)
		w->tmf_response = *(uint32_t *)command_data;
}

/*
 * Runs @ctx's event loop until @w is done or @ms pass.
 * Return: 0 done, -ETIMEDOUT, or -EIO when the connection failed.
 */
static int st_iscsi_wait(struct iscsi_context *ctx, struct st_iscsi_wait *w,
			 uint64_t ms)
{
	uint64_t end = bench_now_ns() + ms * 1000000ull, now;
	struct pollfd pfd;
	int n;

	while (!w->done) {
		now = bench_now_ns();
		if (now >= end)
			return -ETIMEDOUT;
		pfd.fd = iscsi_get_fd(ctx);
		pfd.events = (short)iscsi_which_events(ctx);
		pfd.revents = 0;
		n = poll(&pfd, 1, (int)((end - now) / 1000000ull) + 1);
		if (n < 0 && errno != EINTR)
			return -EIO;
		if (n > 0 && iscsi_service(ctx, pfd.revents) < 0)
			return -EIO;
	}
	return 0;
}

/* Sets a rule; its id, or 0 (counted as an error) when refused. */
static uint64_t st_rule_set(struct st_run *r, const char *rule)
{
	char err[256];
	json_t *rep = st_ctl(r,
			     json_pack("{s:s,s:s,s:s}", "cmd", "fault", "op",
				       "set", "rule", rule),
			     err, sizeof(err));
	uint64_t id;

	if (!rep) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(r, "ERROR: fault set %s: %s", rule, err);
		return 0;
	}
	id = st_json_u64(rep, "id");
	json_decref(rep);
	return id;
}

static bool st_rule_clear(struct st_run *r, uint64_t id)
{
	char err[256];
	json_t *rep = st_ctl(r,
			     json_pack("{s:s,s:s,s:I}", "cmd", "fault", "op",
				       "clear", "id", (json_int_t)id),
			     err, sizeof(err));

	if (!rep) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(r, "ERROR: fault clear %" PRIu64 ": %s", id,
			       err);
		return false;
	}
	json_decref(rep);
	return true;
}

/* FUSE: the read in its own thread; true when it ended right. */
static bool st_hang_fuse(struct st_run *r, struct st_disk *d, unsigned int k,
			 uint64_t id, bool *held, const char **why)
{
	struct st_hang_read *h;
	pthread_t tid;
	bool right = false;

	if (posix_memalign((void **)&h, ST_BLOCK, sizeof(*h))) {
		*why = "out of memory";
		st_rule_clear(r, id);
		return false;
	}
	memset(h, 0, sizeof(*h));
	h->r = r;
	h->d = d;
	h->off = st_off(r, d, k);
	atomic_init(&h->done, false);
	atomic_init(&h->refs, 2);
	if (pthread_create(&tid, NULL, st_hang_reader, h)) {
		free(h);
		*why = "no thread for the read";
		st_rule_clear(r, id);
		return false;
	}
	pthread_detach(tid);
	*held = !st_wait_flag(&h->done, r->hang_ms);
	if (!st_rule_clear(r, id)) {
		*why = "the rule could not be cleared";
	} else if (!*held) {
		*why = "the read was answered while the rule stood";
		st_wait_flag(&h->done, ST_HANG_RELEASE_S * 1000ull);
	} else if (!st_wait_flag(&h->done, ST_HANG_RELEASE_S * 1000ull)) {
		*why = "the read was not let go after the rule was cleared";
	} else if (h->err) {
		*why = "the read failed after the rule was cleared";
	} else {
		right = st_check(r, d, k, h->buf, "a released hang");
		if (!right)
			atomic_fetch_add(&r->lost, 1);
		*why = "the released read returned other bytes";
	}
	/* a reader still blocked frees it when the daemon lets it go */
	st_hang_put(h);
	return right;
}

/*
 * The initiator is done with @t: off @ctx's queues, then freed. A task
 * whose ABORT TASK came back FUNCTION COMPLETE gets no answer from the
 * target (RFC 7143 11.6.1), but libiscsi (1.19) keeps its PDU waiting
 * for one, with @t and the caller's callback data in it, until its own
 * command timeout fires and writes to both: the initiator must cancel
 * it itself. A task already answered or cancelled is not in the queues;
 * iscsi_scsi_cancel_task() then does nothing.
 */
static void st_task_retire(struct iscsi_context *ctx, struct scsi_task *t)
{
	iscsi_scsi_cancel_task(ctx, t);
	scsi_free_scsi_task(t);
}

/* iSCSI: the read held, cleared, ABORT TASK, the read again. */
static bool st_hang_iscsi(struct st_run *r, struct iscsi_context *ctx,
			  struct st_disk *d, unsigned int k, uint64_t id,
			  bool *held, const char **why)
{
	int lun = d->lun < 256 ? (int)d->lun : (int)(0x4000 | d->lun);
	struct st_iscsi_wait rd = {0}, tmf = {.tmf = true};
	uint8_t buf[ST_BLOCK] __attribute__((aligned(ST_BLOCK)));
	uint64_t off = st_off(r, d, k);
	struct scsi_task *t;
	uint32_t sense;
	int e;

	/*
	 * A unit attention pending on this nexus (any LUN added or removed
	 * by the churn reports REPORTED LUNS DATA HAS CHANGED on every LUN)
	 * answers the READ before the rule is looked at: take it and send
	 * the READ again, as an initiator does, a few times.
	 */
	for (int tries = 0;; tries++) {
		memset(&rd, 0, sizeof(rd));
		t = iscsi_read16_task(ctx, lun, off / d->lbsize, ST_BLOCK,
				      (int)d->lbsize, 0, 0, 0, 0, 0,
				      st_iscsi_cb, &rd);
		if (!t) {
			*why = "the READ(16) could not be sent";
			st_rule_clear(r, id);
			return false;
		}
		e = st_iscsi_wait(ctx, &rd, r->hang_ms);
		if (e || tries == 3 ||
		    rd.status != SCSI_STATUS_CHECK_CONDITION ||
		    t->sense.key != SCSI_SENSE_UNIT_ATTENTION)
			break;
		scsi_free_scsi_task(t);
	}
	*held = e == -ETIMEDOUT;
	if (!st_rule_clear(r, id)) {
		*why = "the rule could not be cleared";
		goto out_cancel;
	}
	if (!*held) {
		static __thread char answer[160];

		snprintf(
			answer, sizeof(answer),
			"the read was answered while the rule stood: status 0x%x, sense %x/%02x/%02x",
			(unsigned int)rd.status, (unsigned int)t->sense.key,
			(unsigned int)t->sense.ascq >> 8,
			(unsigned int)t->sense.ascq & 0xffu);
		*why = e ? "the connection failed while the rule stood"
			 : answer;
		goto out_cancel;
	}
	/* the rule is gone, the command is not: the initiator's timeout */
	if (iscsi_task_mgmt_abort_task_async(ctx, t, st_iscsi_cb, &tmf)) {
		*why = "ABORT TASK could not be sent";
		goto out_cancel;
	}
	e = st_iscsi_wait(ctx, &tmf, ST_HANG_RELEASE_S * 1000ull);
	if (e || tmf.status != SCSI_STATUS_GOOD ||
	    tmf.tmf_response != ISCSI_TMR_FUNC_COMPLETE) {
		*why = "ABORT TASK of the hung read did not complete";
		goto out_cancel;
	}
	st_task_retire(ctx, t);
	e = st_iscsi_io(r, ctx, d, off, buf, false, &sense);
	if (e) {
		*why = "the read sent again after the abort failed";
		return false;
	}
	*why = "the read sent again returned other bytes";
	if (!st_check(r, d, k, buf, "a read after an aborted hang")) {
		atomic_fetch_add(&r->lost, 1);
		return false;
	}
	return true;
out_cancel:
	st_task_retire(ctx, t);
	return false;
}

static void st_hang_one(struct st_run *r, struct iscsi_context *ctx,
			struct st_disk *d, unsigned int k, enum st_path p)
{
	uint32_t lbs = d->lbsize ? d->lbsize : 512;
	uint64_t lba = st_off(r, d, k) / lbs, id;
	const char *why = "";
	bool held = false, right;
	char rule[160];

	snprintf(rule, sizeof(rule),
		 "hang luns=%u lba=%" PRIu64 "-%" PRIu64 " ops=read", d->lun,
		 lba, lba + ST_BLOCK / lbs - 1);
	id = st_rule_set(r, rule);
	if (!id)
		return;
	atomic_fetch_add(&r->faults, 1);
	atomic_fetch_add(&r->hangs, 1);
	right = p == ST_FUSE ? st_hang_fuse(r, d, k, id, &held, &why)
			     : st_hang_iscsi(r, ctx, d, k, id, &held, &why);
	if (held)
		atomic_fetch_add(&r->hangs_held, 1);
	if (right)
		atomic_fetch_add(&r->hangs_released, 1);
	if (right && p == ST_ISCSI)
		atomic_fetch_add(&r->hangs_aborted, 1);
	atomic_fetch_add(right ? &r->faults_right : &r->faults_wrong, 1);
	if (!right)
		st_log_problem(r, "WRONG: fault '%s' via %s: %s", rule,
			       p == ST_FUSE ? "file" : "iSCSI", why);
}

/*
 * One fault rule on one written block of @d: the host must see it as the
 * kind's error (or delay), and the block as it was once the rule is gone.
 */
static void st_fault_one(struct st_run *r, struct iscsi_context *ctx,
			 struct st_disk *d, struct rng *rs)
{
	char rule[160], err[256];
	uint8_t buf[ST_BLOCK] __attribute__((aligned(ST_BLOCK)));
	unsigned int k = (unsigned int)rng_below(rs, r->nblocks), kind, nkinds;
	uint64_t off = st_off(r, d, k), lba, span, t0, dt;
	enum st_path p = st_pick_path(r, rs);
	uint32_t sense = 0;
	json_t *rep;
	bool right;
	int e;

	/* the rule's LBAs are the LUN's logical blocks */
	lba = off / (d->lbsize ? d->lbsize : 512);
	span = ST_BLOCK / (d->lbsize ? d->lbsize : 512);
	/* ua reaches only an iSCSI initiator; hangs come with --hang-ms */
	nkinds = (p == ST_ISCSI ? 4u : 3u) + (r->hang_ms ? 1u : 0u);
	kind = (unsigned int)rng_below(rs, nkinds);
	if (r->hang_ms && kind == nkinds - 1) {
		st_hang_one(r, ctx, d, k, p);
		return;
	}
	switch (kind) {
	case 0:
		snprintf(rule, sizeof(rule),
			 "medium-read luns=%u lba=%" PRIu64 "-%" PRIu64, d->lun,
			 lba, lba + span - 1);
		break;
	case 1:
		snprintf(rule, sizeof(rule),
			 "medium-write luns=%u lba=%" PRIu64 "-%" PRIu64,
			 d->lun, lba, lba + span - 1);
		break;
	case 2:
		snprintf(rule, sizeof(rule), "delay luns=%u delay=%ums", d->lun,
			 ST_DELAY_MS);
		break;
	default:
		snprintf(rule, sizeof(rule), "ua luns=%u count=1", d->lun);
		break;
	}
	rep = st_ctl(r,
		     json_pack("{s:s,s:s,s:s}", "cmd", "fault", "op", "set",
			       "rule", rule),
		     err, sizeof(err));
	if (!rep) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(r, "ERROR: fault set %s: %s", rule, err);
		return;
	}
	atomic_fetch_add(&r->faults, 1);
	uint64_t id = st_json_u64(rep, "id");

	json_decref(rep);
	t0 = bench_now_ns();
	if (kind == 1) {
		st_stamp(buf, d->lun, off, atomic_fetch_add(&r->next_gen, 1));
		e = p == ST_FUSE
			    ? st_fuse_io(r, d, off, buf, true)
			    : st_iscsi_io(r, ctx, d, off, buf, true, &sense);
	} else if (kind == 3) {
		/* the UA must be there on the first command: no retry */
		int lun = d->lun < 256 ? (int)d->lun : (int)(0x4000 | d->lun);
		struct scsi_task *tk = iscsi_testunitready_sync(ctx, lun);

		e = tk && tk->status == SCSI_STATUS_CHECK_CONDITION ? -EIO : 0;
		if (tk)
			sense = (uint32_t)tk->sense.key << 16;
		if (tk)
			scsi_free_scsi_task(tk);
	} else {
		e = p == ST_FUSE
			    ? st_fuse_io(r, d, off, buf, false)
			    : st_iscsi_io(r, ctx, d, off, buf, false, &sense);
	}
	dt = bench_now_ns() - t0;
	switch (kind) {
	case 0:
	case 1:
		/* a block device answers a medium error ENODATA
		 * (BLK_STS_MEDIUM), a FUSE file EIO */
		right = p == ST_FUSE
				? e == -EIO || e == -ENODATA
				: e == -EIO && (sense >> 16) ==
						       SCSI_SENSE_MEDIUM_ERROR;
		break;
	case 2:
		right = e == 0 && dt >= ST_DELAY_MS * 1000000ull &&
			st_check(r, d, k, buf, "a delay");
		break;
	default:
		right = e == -EIO && (sense >> 16) == SCSI_SENSE_UNIT_ATTENTION;
		break;
	}
	atomic_fetch_add(right ? &r->faults_right : &r->faults_wrong, 1);
	if (!right)
		st_log_problem(
			r,
			"WRONG: fault '%s' via %s: error %s, sense %06x, %.1f ms",
			rule, p == ST_FUSE ? "file" : "iSCSI",
			e ? strerror(-e) : "none", sense, dt / 1e6);
	/* a one-shot ua that fired is gone already */
	if (kind == 3 && right)
		goto check;
	rep = st_ctl(r,
		     json_pack("{s:s,s:s,s:I}", "cmd", "fault", "op", "clear",
			       "id", (json_int_t)id),
		     err, sizeof(err));
	if (!rep) {
		atomic_fetch_add(&r->errors, 1);
		st_log_problem(r, "ERROR: fault clear %" PRIu64 ": %s", id,
			       err);
		return;
	}
	json_decref(rep);
check:
	/* a write that failed changed nothing */
	st_read_check(r, ctx, d, k, p);
}

static void *st_faulter(void *arg)
{
	struct st_thread *t = arg;
	struct st_run *r = t->r;
	struct rng rs = rng_init(r->seed ^ 0xfau);
	int stuck = 0; /* commands found left in the queue so far */

	for (;;) {
		st_nap(r, r->fault_ms);
		if (st_done(r))
			break;
		struct st_disk *d = &r->disks[rng_below(&rs, r->ndisks)];
		int queued;

		pthread_mutex_lock(&d->lock);
		st_fault_one(r, t->ctx, d, &rs);
		pthread_mutex_unlock(&d->lock);
		/*
		 * Every fault ends with its commands answered, cancelled or
		 * retired: one still queued is a task the run freed while
		 * libiscsi holds it, whose late callback would write into
		 * freed memory and into another fault's answer. Each is
		 * counted once.
		 */
		if (t->ctx && (queued = iscsi_queue_length(t->ctx)) > stuck) {
			atomic_fetch_add(&r->broken,
					 (uint64_t)(queued - stuck));
			st_log_problem(
				r,
				"BROKEN: %d command(s) left in the initiator's queue after a fault on %s ended",
				queued - stuck, d->name);
			stuck = queued;
		}
	}
	return NULL;
}

/* ---- setup ------------------------------------------------------------ */

static int st_parse_url(struct st_run *r, const char *url)
{
	const char *p, *slash;

	if (strncmp(url, "iscsi://", 8) != 0)
		return -EINVAL;
	p = url + 8;
	slash = strchr(p, '/');
	if (!slash || slash == p || !slash[1] ||
	    (size_t)(slash - p) >= sizeof(r->portal) ||
	    strlen(slash + 1) >= sizeof(r->target))
		return -EINVAL;
	memcpy(r->portal, p, (size_t)(slash - p));
	r->portal[slash - p] = '\0';
	strcpy(r->target, slash + 1);
	if (r->target[strlen(r->target) - 1] == '/')
		r->target[strlen(r->target) - 1] = '\0';
	return 0;
}

static int st_setup_disks(struct st_run *r, struct iscsi_context *ctx)
{
	unsigned int i;

	r->disks = calloc(r->ndisks, sizeof(*r->disks));
	if (!r->disks)
		return -ENOMEM;
	for (i = 0; i < r->ndisks; i++) {
		struct st_disk *d = &r->disks[i];

		pthread_mutex_init(&d->lock, NULL);
		d->lun = i;
		if (sdnum_name("sd", i, d->name, sizeof(d->name)) < 0)
			return -EINVAL;
		d->gen = calloc(r->nblocks, sizeof(*d->gen));
		if (!d->gen)
			return -ENOMEM;
		if (r->use_fuse) {
			int64_t sz = st_stat(r, d);

			if (sz < 0) {
				fprintf(stderr, "stress: %s/%s: %s\n", r->dir,
					d->name, strerror((int)-sz));
				return -ENOENT;
			}
			d->bytes = (uint64_t)sz;
		}
		if (r->use_iscsi) {
			int lun = i < 256 ? (int)i : (int)(0x4000 | i);
			struct scsi_task *t = NULL;
			struct scsi_readcapacity16 *rc16 = NULL;
			uint64_t bytes;

			/* a unit attention first is no failure: ask again */
			for (int n = 0; n < 4 && !rc16; n++) {
				if (t)
					scsi_free_scsi_task(t);
				t = iscsi_readcapacity16_sync(ctx, lun);
				if (t && t->status == SCSI_STATUS_GOOD)
					rc16 = scsi_datain_unmarshall(t);
			}
			if (!rc16 || !rc16->block_length) {
				fprintf(stderr,
					"stress: READ CAPACITY(16) of LUN %u over iSCSI failed\n",
					i);
				if (t)
					scsi_free_scsi_task(t);
				return -EIO;
			}
			bytes = (rc16->returned_lba + 1) *
				(uint64_t)rc16->block_length;
			d->lbsize = rc16->block_length;
			scsi_free_scsi_task(t);
			if (r->use_fuse && bytes != d->bytes) {
				fprintf(stderr,
					"stress: LUN %u is %" PRIu64
					" bytes over iSCSI but %s is %" PRIu64
					": not the same disk\n",
					i, bytes, d->name, d->bytes);
				return -EINVAL;
			}
			d->bytes = bytes;
		}
		if (d->bytes / ST_BLOCK < (uint64_t)r->nblocks * 2) {
			fprintf(stderr,
				"stress: %s is %" PRIu64
				" bytes, too small for %u blocks\n",
				d->name, d->bytes, r->nblocks);
			return -EINVAL;
		}
	}
	return 0;
}

static void st_usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench stress [DIR] --control SOCKET [--iscsi URL]\n"
		"                   [--seconds S] [--disks N] [--blocks B] [--workers W]\n"
		"                   [--churn-ms MS] [--fault-ms MS] [--hang-ms MS] [--seed X]\n"
		"                   [--churn remove,resize,offline] [--direct]\n"
		"                   [--rss-slack MIB] [--progress S] [--json]\n"
		"DIR is sdswarmd's FUSE mount; --iscsi iscsi://HOST:PORT/TARGET-IQN its\n"
		"target. The disks are LUNs 0..N-1 (dense). Ends with a verdict: exit 1 on\n"
		"any block lost, unexpected error, stale name, wrong fault answer, or\n"
		"daemon RSS/descriptor growth. See sdswarm-bench(1).\n");
}

/* --churn remove,resize,offline: which changes the churn thread makes. */
static int st_churn_opt(struct st_run *r, const char *arg)
{
	char buf[128], *tok, *save = NULL;
	unsigned int i;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	r->churn_kinds = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ST_CHURN_KINDS; i++)
			if (strcmp(tok, st_churn_names[i]) == 0)
				break;
		if (i == ST_CHURN_KINDS)
			goto bad;
		r->churn_kinds |= 1u << i;
	}
	if (r->churn_kinds)
		return 0;
bad:
	fprintf(stderr,
		"stress: --churn '%s': a list of remove, resize and offline\n",
		arg);
	return -1;
}

/* A numeric option into its field; prints why and returns -1 if bad. */
static int st_number_opt(struct st_run *r, int opt, const char *arg)
{
	static const struct {
		int opt;
		const char *name;
		uint64_t min, max;
	} lim[] = {
		{'s', "seconds", 1, ST_MAX_SECONDS},
		{'d', "disks", 1, ST_MAX_DISKS},
		{'b', "blocks", 1, ST_MAX_BLOCKS},
		{'w', "workers", 1, ST_MAX_WORKERS},
		{'C', "churn-ms", 0, 3600000},
		{'F', "fault-ms", 0, 3600000},
		{'H', "hang-ms", 0, 60000},
		{'S', "seed", 0, UINT64_MAX},
		{'R', "rss-slack", 0, 1u << 20},
		{'P', "progress", 0, 3600},
	};
	uint64_t v;
	size_t i;

	for (i = 0; lim[i].opt != opt; i++)
		;
	if (bench_parse_u64(arg, lim[i].min, lim[i].max, &v)) {
		fprintf(stderr,
			"stress: --%s: '%s' is not a number in %" PRIu64
			"..%" PRIu64 "\n",
			lim[i].name, arg, lim[i].min, lim[i].max);
		return -1;
	}
	switch (opt) {
	case 's':
		r->seconds = v;
		break;
	case 'd':
		r->ndisks = (unsigned int)v;
		break;
	case 'b':
		r->nblocks = (unsigned int)v;
		break;
	case 'w':
		r->workers = (unsigned int)v;
		break;
	case 'C':
		r->churn_ms = v;
		break;
	case 'F':
		r->fault_ms = v;
		break;
	case 'H':
		r->hang_ms = v;
		break;
	case 'R':
		r->rss_slack_mib = v;
		break;
	case 'P':
		r->progress_s = v;
		break;
	default:
		r->seed = v;
		break;
	}
	return 0;
}

/*
 * The command line: the options into @r and @o, --iscsi's URL (not yet
 * parsed) into @url. Return: -1 to run, else the exit status (0 after
 * --help, 1 a bad command line, 2 a bad --only).
 */
static int st_parse(int argc, char **argv, struct st_run *r,
		    struct bench_opts *o, const char **url)
{
	static const struct option longopts[] = {
		{"control", required_argument, NULL, 'c'},
		{"iscsi", required_argument, NULL, 'i'},
		{"seconds", required_argument, NULL, 's'},
		{"disks", required_argument, NULL, 'd'},
		{"blocks", required_argument, NULL, 'b'},
		{"workers", required_argument, NULL, 'w'},
		{"churn-ms", required_argument, NULL, 'C'},
		{"fault-ms", required_argument, NULL, 'F'},
		{"hang-ms", required_argument, NULL, 'H'},
		{"seed", required_argument, NULL, 'S'},
		{"rss-slack", required_argument, NULL, 'R'},
		{"progress", required_argument, NULL, 'P'},
		{"churn", required_argument, NULL, 'K'},
		{"direct", no_argument, NULL, 'D'},
		BENCH_COMMON_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	uint32_t none;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'c':
			r->control = optarg;
			break;
		case 'i':
			*url = optarg;
			break;
		case 's':
		case 'd':
		case 'b':
		case 'w':
		case 'C':
		case 'F':
		case 'H':
		case 'S':
		case 'R':
			if (st_number_opt(r, opt, optarg))
				return 1;
			break;
		case 'K':
			if (st_churn_opt(r, optarg))
				return 1;
			break;
		case 'D':
			r->direct = true;
			break;
		case 'h':
			st_usage(stdout);
			return 0;
		default:
			if (bench_common_opt(o, opt, optarg, "stress") > 0)
				break;
			st_usage(stderr);
			return 1;
		}
	}
	if (optind < argc)
		r->dir = argv[optind++];
	if (optind < argc || !r->control || (!r->dir && !*url)) {
		st_usage(stderr);
		return 1;
	}
	if (bench_only(o, "stress", NULL, 0, &none))
		return 2; /* a usage error */
	return -1;
}

/* What the run found beyond struct st_run's counters: the verdict and
 * what it was judged on. */
struct st_result {
	double secs;
	uint64_t final_verified;
	uint64_t rss0, rss1, rss_end;
	long fds0, fds1;
	bool rss_grew, fds_grew, pass;
	const char *verdict; /* PASS, FAIL, or BROKEN: the harness broke */
};

/* The --json report: one compact object on a line. 0, or -errno (nothing
 * or part of it printed). */
static int st_print_json(struct st_run *r, const struct st_result *f)
{
	unsigned int i;
	json_t *j = json_object();
	const struct {
		const char *key;
		uint64_t v;
	} nums[] = {
		{"disks", r->ndisks},
		{"blocks_per_disk", r->nblocks},
		{"workers", r->workers},
		{"seed", r->seed},
		{"writes", r->writes},
		{"reads", r->reads},
		{"blocks_verified", r->verified},
		{"final_pass_verified", f->final_verified},
		{"blocks_lost", r->lost},
		{"unexpected_errors", r->errors},
		{"stale_names", r->stale},
		{"lun_remove_add", r->removes},
		{"lun_resize", r->resizes},
		{"lun_offline_online", r->offlines},
		{"faults_injected", r->faults},
		{"faults_seen_right", r->faults_right},
		{"faults_wrong", r->faults_wrong},
		{"hangs_injected", r->hangs},
		{"hangs_held", r->hangs_held},
		{"hangs_released", r->hangs_released},
		{"hangs_aborted", r->hangs_aborted},
		{"hang_ms", r->hang_ms},
		{"harness_broken", r->broken},
		{"daemon_rss_start", f->rss0},
		{"daemon_rss_end", f->rss1},
		{"daemon_rss_after_removal", f->rss_end},
	};

	if (!j || bench_json_stamp(j)) {
		json_decref(j);
		return -ENOMEM;
	}
	json_object_set_new(j, "bench", json_string("stress"));
	json_object_set_new(j, "seconds", json_real(f->secs));
	json_object_set_new(j, "paths",
			    json_string(r->use_fuse && r->use_iscsi
						? "fuse+iscsi"
					: r->use_fuse ? "fuse"
						      : "iscsi"));
	for (i = 0; i < ARRAY_SIZE(nums); i++)
		json_object_set_new(j, nums[i].key,
				    json_integer((json_int_t)nums[i].v));
	json_object_set_new(j, "daemon_fds_start", json_integer(f->fds0));
	json_object_set_new(j, "daemon_fds_end", json_integer(f->fds1));
	json_object_set_new(j, "rss_grew", json_boolean(f->rss_grew));
	json_object_set_new(j, "fds_grew", json_boolean(f->fds_grew));
	json_object_set_new(j, "verdict", json_string(f->verdict));
	if (!j || json_dumpf(j, stdout, JSON_COMPACT) < 0) {
		json_decref(j);
		return -EIO;
	}
	putchar('\n');
	json_decref(j);
	return 0;
}

static void st_print_text(struct st_run *r, const struct st_result *f)
{
	printf("stress: %.1f s, %u disks x %u blocks of 4 KiB, %u workers, through %s, seed %" PRIu64
	       "\n\n",
	       f->secs, r->ndisks, r->nblocks, r->workers,
	       r->use_fuse && r->use_iscsi ? "FUSE and iSCSI"
	       : r->use_fuse		   ? "FUSE"
					   : "iSCSI",
	       r->seed);
	printf("%-36s %14" PRIu64 "\n", "writes (each stamped)",
	       (uint64_t)r->writes);
	printf("%-36s %14" PRIu64 "\n", "reads", (uint64_t)r->reads);
	printf("%-36s %14" PRIu64 "\n", "blocks verified",
	       (uint64_t)r->verified);
	printf("%-36s %14" PRIu64 "\n", "  of them in the final pass",
	       f->final_verified);
	printf("%-36s %14" PRIu64 "\n", "blocks lost (must be 0)",
	       (uint64_t)r->lost);
	printf("%-36s %14" PRIu64 "\n", "unexpected errors",
	       (uint64_t)r->errors);
	printf("%-36s %14" PRIu64 "\n", "stale names or sizes",
	       (uint64_t)r->stale);
	printf("%-36s %14" PRIu64 "\n", "LUN changes: remove+add",
	       (uint64_t)r->removes);
	printf("%-36s %14" PRIu64 "\n", "LUN changes: resize up+down",
	       (uint64_t)r->resizes);
	printf("%-36s %14" PRIu64 "\n", "LUN changes: offline+online",
	       (uint64_t)r->offlines);
	printf("%-36s %14" PRIu64 "\n", "faults injected", (uint64_t)r->faults);
	printf("%-36s %14" PRIu64 "\n", "faults seen as the right error",
	       (uint64_t)r->faults_right);
	printf("%-36s %14" PRIu64 "\n", "faults answered wrongly",
	       (uint64_t)r->faults_wrong);
	printf("%-36s %14" PRIu64 "\n", "hangs injected (of the faults)",
	       (uint64_t)r->hangs);
	printf("%-36s %14" PRIu64 "\n", "  held unanswered for --hang-ms",
	       (uint64_t)r->hangs_held);
	printf("%-36s %14" PRIu64 "\n", "  released right after the clear",
	       (uint64_t)r->hangs_released);
	printf("%-36s %14" PRIu64 "\n", "    of them by ABORT TASK (iSCSI)",
	       (uint64_t)r->hangs_aborted);
	printf("%-36s %8.1f MiB -> %.1f MiB at the end -> %.1f MiB after removal (slack %" PRIu64
	       " MiB)%s\n",
	       "daemon RSS", f->rss0 / 1048576.0, f->rss1 / 1048576.0,
	       f->rss_end / 1048576.0, r->rss_slack_mib,
	       f->rss_grew ? "  GREW" : "");
	printf("%-36s %14ld -> %ld%s\n", "daemon open descriptors", f->fds0,
	       f->fds1, f->fds_grew ? "  GREW" : "");
	if (r->broken)
		printf("%-36s %14" PRIu64 "\n", "harness faults (no verdict)",
		       (uint64_t)r->broken);
	printf("\nverdict: %s\n", f->verdict);
}

/*
 * Warm-up: every block written once, then every disk removed and added
 * back. The store keeps freed chunks for reuse, so the RSS after that is
 * the baseline the end is held to: what the run adds past it and does not
 * give back after removal is a leak.
 */
static void st_warm_up(struct st_run *r, struct iscsi_context *ctx)
{
	unsigned int i, k;

	for (i = 0; i < r->ndisks; i++)
		for (k = 0; k < r->nblocks; k++)
			st_write(r, ctx, &r->disks[i], k,
				 r->use_fuse ? ST_FUSE : ST_ISCSI);
	if (r->churn_kinds & 1u << ST_CHURN_REMOVE)
		for (i = 0; i < r->ndisks; i++)
			st_churn_remove(r, &r->disks[i]);
}

/*
 * The run: the workers, the churner (--churn-ms) and the faulter
 * (--fault-ms) until @r->deadline_ns, all joined. A thread that cannot be
 * started stops the others at once (the run then fails on what it did).
 */
/*
 * While the threads run: a line on stderr every --progress seconds (none
 * when 0), so that a long run shows it is alive and how it goes. @writes0
 * and @removes0 are what the warm-up counted, not the run.
 */
static void st_progress(struct st_run *r, uint64_t writes0, uint64_t removes0)
{
	uint64_t t0 = r->deadline_ns - r->seconds * 1000000000ull;

	if (!r->progress_s)
		return;
	for (;;) {
		st_nap(r, r->progress_s * 1000u);
		if (st_done(r))
			return;
		fprintf(stderr,
			"stress: %" PRIu64 "/%" PRIu64 " s: %" PRIu64
			" writes, %" PRIu64 " blocks verified, %" PRIu64
			" faults (%" PRIu64 " seen right), %" PRIu64
			" LUN changes, %" PRIu64 " problems\n",
			(uint64_t)((bench_now_ns() - t0) / 1000000000ull),
			r->seconds, (uint64_t)atomic_load(&r->writes) - writes0,
			(uint64_t)atomic_load(&r->verified),
			(uint64_t)atomic_load(&r->faults),
			(uint64_t)atomic_load(&r->faults_right),
			(uint64_t)(atomic_load(&r->removes) - removes0 +
				   atomic_load(&r->resizes) +
				   atomic_load(&r->offlines)),
			(uint64_t)(atomic_load(&r->lost) +
				   atomic_load(&r->errors) +
				   atomic_load(&r->stale) +
				   atomic_load(&r->faults_wrong) +
				   atomic_load(&r->broken)));
	}
}

static void st_run_threads(struct st_run *r, struct st_thread *th,
			   uint64_t writes0, uint64_t removes0)
{
	unsigned int i, nth = 0;

	for (i = 0; i < r->workers; i++, nth++)
		if (pthread_create(&th[i].tid, NULL, st_worker, &th[i]))
			goto join;
	if (r->churn_ms) {
		if (pthread_create(&th[r->workers].tid, NULL, st_churner,
				   &th[r->workers]))
			goto join;
		nth++;
	}
	if (r->fault_ms) {
		if (pthread_create(&th[r->workers + 1].tid, NULL, st_faulter,
				   &th[r->workers + 1]))
			goto join;
		nth++;
	}
	st_progress(r, writes0, removes0);
join:
	if (nth < r->workers + !!r->churn_ms + !!r->fault_ms)
		atomic_store(&r->stop, true);
	for (i = 0; i < r->workers + 2; i++)
		if (th[i].tid)
			pthread_join(th[i].tid, NULL);
}

int bench_stress(int argc, char **argv)
{
	struct bench_opts o = {0};
	struct st_run r = {.ndisks = 16,
			   .nblocks = 64,
			   .workers = 4,
			   .seconds = 30,
			   .churn_ms = 500,
			   .fault_ms = 700,
			   .hang_ms = 300,
			   .seed = 1,
			   .rss_slack_mib = 8,
			   .progress_s = 10,
			   .ctl_fd = -1,
			   .churn_kinds = (1u << ST_CHURN_KINDS) - 1};
	struct st_thread th[ST_MAX_WORKERS + 2];
	uint64_t t0, warm_writes, warm_removes, run_removes, verified_before;
	struct st_result f = {0};
	const char *url = NULL;
	unsigned int i;
	int ret;

	pthread_mutex_init(&r.ctl_lock, NULL);
	atomic_store(&r.next_gen, 1);
	ret = st_parse(argc, argv, &r, &o, &url);
	if (ret >= 0)
		return ret;
	ret = 1;
	r.use_fuse = r.dir != NULL;
	if (url && st_parse_url(&r, url)) {
		fprintf(stderr,
			"stress: --iscsi '%s': want iscsi://HOST:PORT/TARGET-IQN\n",
			url);
		return 1;
	}
	r.use_iscsi = url != NULL;
	if (st_ctl_open(&r)) {
		fprintf(stderr, "stress: cannot reach sdswarmd at %s: %s\n",
			r.control, strerror(errno));
		return 1;
	}
	memset(th, 0, sizeof(th));
	for (i = 0; i < r.workers + 2; i++) {
		th[i].r = &r;
		th[i].id = i;
		if (r.use_iscsi && !(th[i].ctx = st_iscsi_login(&r, i)))
			goto out;
	}
	if (st_setup_disks(&r, th[0].ctx))
		goto out;
	st_warm_up(&r, th[0].ctx);
	f.rss0 = st_daemon_rss(&r);
	f.fds0 = st_daemon_fds(&r);
	warm_writes = atomic_load(&r.writes);
	warm_removes = atomic_load(&r.removes);

	t0 = bench_now_ns();
	r.deadline_ns = t0 + r.seconds * 1000000000ull;
	st_run_threads(&r, th, warm_writes, warm_removes);
	/* the final pass: every block of every disk, through every path */
	verified_before = atomic_load(&r.verified);
	for (i = 0; i < r.ndisks; i++)
		st_check_disk(&r, th[0].ctx, &r.disks[i]);
	f.final_verified = atomic_load(&r.verified) - verified_before;

	f.rss1 = st_daemon_rss(&r);
	run_removes = atomic_load(&r.removes) - warm_removes;
	/* every written LUN removed and added back: its data must go */
	for (i = 0; i < r.ndisks; i++)
		if (r.disks[i].written && r.churn_kinds & 1u << ST_CHURN_REMOVE)
			st_churn_remove(&r, &r.disks[i]);
	f.rss_end = st_daemon_rss(&r);
	f.fds1 = st_daemon_fds(&r);

	atomic_fetch_sub(&r.writes, warm_writes);
	atomic_store(&r.removes, run_removes);
	f.rss_grew = f.rss0 && f.rss_end > f.rss0 + (r.rss_slack_mib << 20);
	f.fds_grew = f.fds0 >= 0 && f.fds1 > f.fds0;
	f.pass = !atomic_load(&r.lost) && !atomic_load(&r.errors) &&
		 !atomic_load(&r.stale) && !atomic_load(&r.faults_wrong) &&
		 !f.rss_grew && !f.fds_grew && atomic_load(&r.writes) > 0;
	f.secs = (bench_now_ns() - t0) / 1e9;
	f.verdict = atomic_load(&r.broken) ? "BROKEN"
		    : f.pass		   ? "PASS"
					   : "FAIL";

	if (o.json) {
		if (st_print_json(&r, &f))
			goto out;
	} else {
		st_print_text(&r, &f);
	}
	ret = atomic_load(&r.broken) ? 3 : f.pass ? 0 : 1;
out:
	for (i = 0; i < ST_MAX_WORKERS + 2; i++)
		if (th[i].ctx) {
			iscsi_logout_sync(th[i].ctx);
			iscsi_destroy_context(th[i].ctx);
		}
	if (r.disks) {
		for (i = 0; i < r.ndisks; i++)
			free(r.disks[i].gen);
		free(r.disks);
	}
	if (r.ctl_fd >= 0)
		close(r.ctl_fd);
	return ret;
}
