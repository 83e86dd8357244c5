// SPDX-License-Identifier: MIT
/*
 * sdswarm-bench iscsi: a libiscsi client of our own that drives one iSCSI
 * target. J threads, each with its own session and its own poll loop on
 * libiscsi's asynchronous API, keep QD READ(16)/WRITE(16) commands in flight
 * for S seconds; IOPS, MiB/s and latency (a log-linear histogram) per job
 * and in total, as a table or one JSON object. Any failure is an exit 1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <jansson.h>

#include "array.h"
#include "bytes.h"
#include "bench.h"
#include "cli.h"
#include "parse.h"
#include "rng.h"

#define ISB_QD 32u
#define ISB_MAX_QD 4096u
#define ISB_BS 4096u
#define ISB_MIN_BS 512u
#define ISB_MAX_BS (8u << 20)
#define ISB_MAX_JOBS 256u
/* Per session: QD x bs bytes of buffers, allocated before the run. */
#define ISB_MAX_INFLIGHT (1u << 30)
#define ISB_MAX_LUNS 256u
#define ISB_SECONDS 5.0
#define ISB_QUICK_SECONDS 0.5
#define ISB_MAX_SECONDS 3600.0
#define ISB_INITIATOR "iqn.2026-12.org.sdswarm:bench"
/* libiscsi's own PDU timeout, and how long the last commands may take to
 * come back after the run's end: a target that stops answering makes the
 * benchmark fail, not hang. */
#define ISB_TIMEOUT_S 10
#define ISB_DRAIN_NS (15ull * 1000000000ull)
/* Setup commands that report a unit attention (POWER ON OCCURRED, a LUN
 * added) are repeated at most this often; each nexus gets a few at most. */
#define ISB_UA_RETRIES 8
/* The poll timeout: also how often libiscsi gets to check its timeouts. */
#define ISB_POLL_MS 100
/* A seed of our own, fixed, so every run draws the same LBAs. */
#define ISB_SEED 0x5d5a4d0000000001ull

/*
 * Latency histogram: exact below 2 * ISB_HSUB ns, then ISB_HSUB buckets per
 * power of two (1/32 of an octave: a percentile is within 3% of the true
 * value). 1920 buckets, 15 KiB per job, an add is a count-leading-zeros and
 * an increment: no sample is stored, whatever the run's length.
 */
#define ISB_HSUB_BITS 5u
#define ISB_HSUB (1u << ISB_HSUB_BITS)
#define ISB_HBUCKETS ((64u - ISB_HSUB_BITS) * ISB_HSUB)

enum isb_rw { ISB_RANDREAD, ISB_RANDWRITE, ISB_SEQREAD, ISB_SEQWRITE };

static const char *const isb_rw_name[] = {
	[ISB_RANDREAD] = "randread",
	[ISB_RANDWRITE] = "randwrite",
	[ISB_SEQREAD] = "seqread",
	[ISB_SEQWRITE] = "seqwrite",
};

struct isb_hist {
	uint64_t b[ISB_HBUCKETS];
	uint64_t n;
	uint64_t max;
	double sum;
};

struct isb_opts {
	struct bench_opts common;
	const char *url;
	const char *initiator;
	enum isb_rw rw;
	unsigned int bs;
	unsigned int qd;
	unsigned int jobs;
	double seconds;
	bool have_seconds;
};

struct isb_job;

/* One command slot: its buffer and where its command went. */
struct isb_slot {
	struct isb_job *job;
	struct scsi_task *task;
	struct scsi_iovec iov;
	uint64_t t_submit;
	uint64_t lba;
};

struct isb_run;

struct isb_job {
	struct isb_run *run;
	unsigned int idx;
	int lun;
	struct iscsi_context *ctx;
	pthread_t thread;
	bool started;
	/* The LUN as READ CAPACITY (16) describes it. */
	uint32_t block_len;
	uint64_t lun_bytes;
	/* Whole bs-sized units in the LUN; the next sequential one. */
	uint64_t units;
	uint64_t cursor;
	struct rng rng;
	uint8_t *bufs;
	struct isb_slot *slots;
	unsigned int inflight;
	/* No new command: the run ended, or something failed. */
	bool stop;
	uint64_t deadline;
	uint64_t ops;
	uint64_t bytes;
	uint64_t t_start;
	uint64_t t_end;
	uint64_t cpu_ns;
	struct isb_hist hist;
	int err;
	char msg[1024];
};

struct isb_run {
	struct isb_opts o;
	char portal[MAX_STRING_SIZE + 1];
	char target[MAX_STRING_SIZE + 1];
	char user[MAX_STRING_SIZE + 1];
	char passwd[MAX_STRING_SIZE + 1];
	bool all_luns;
	int luns[ISB_MAX_LUNS];
	unsigned int nluns;
	struct isb_job *jobs;
	/* The start gate: 0 wait, 1 go, -1 give up (a thread could not be
	 * created). */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	int gate;
	/*
	 * Set by the job that fails first, read by the others' loops: a
	 * relaxed load per poll round, so a failure stops the whole run
	 * within one round instead of after S seconds. Nothing else is
	 * published through it (each job's results are read after the join).
	 */
	atomic_bool abort;
	uint64_t t0;
	uint64_t t_end;
	struct isb_hist total;
};

/* ---- helpers -------------------------------------------------------- */

/* The first failure of a job, kept as its message; later ones only
 * count. */
static void isb_job_fail(struct isb_job *j, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void isb_job_fail(struct isb_job *j, int err, const char *fmt, ...)
{
	va_list ap;

	j->stop = true;
	atomic_store_explicit(&j->run->abort, true, memory_order_relaxed);
	if (j->err)
		return;
	j->err = err;
	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
}

static uint64_t isb_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the histogram -------------------------------------------------- */

static inline unsigned int isb_hbucket(uint64_t v)
{
	unsigned int e;

	if (v < 2 * ISB_HSUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v) - ISB_HSUB_BITS;
	return e * ISB_HSUB + (unsigned int)(v >> e);
}

/* The smallest value of bucket @i and its width. */
static void isb_hbounds(unsigned int i, uint64_t *low, uint64_t *width)
{
	unsigned int e;

	if (i < 2 * ISB_HSUB) {
		*low = i;
		*width = 1;
		return;
	}
	e = i / ISB_HSUB - 1;
	*low = (uint64_t)(i % ISB_HSUB + ISB_HSUB) << e;
	*width = 1ull << e;
}

static inline void isb_hadd(struct isb_hist *h, uint64_t ns)
{
	h->b[isb_hbucket(ns)]++;
	h->n++;
	h->sum += (double)ns;
	if (ns > h->max)
		h->max = ns;
}

static void isb_hmerge(struct isb_hist *to, const struct isb_hist *from)
{
	unsigned int i;

	for (i = 0; i < ISB_HBUCKETS; i++)
		to->b[i] += from->b[i];
	to->n += from->n;
	to->sum += from->sum;
	if (from->max > to->max)
		to->max = from->max;
}

/* The @p-th percentile (0..100), as the middle of the bucket that holds
 * the sample of that rank, never above the largest one seen; NAN when
 * empty. */
static double isb_hpct(const struct isb_hist *h, double p)
{
	uint64_t rank, seen = 0, low, width;
	double mid;
	unsigned int i;

	if (!h->n)
		return NAN;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < ISB_HBUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			break;
	}
	isb_hbounds(i, &low, &width);
	mid = (double)low + (double)(width - 1) / 2.0;
	return mid > (double)h->max ? (double)h->max : mid;
}

static double isb_hmean(const struct isb_hist *h)
{
	return h->n ? h->sum / (double)h->n : NAN;
}

/* ---- SCSI outcomes -------------------------------------------------- */

/* What a finished task says, in words, into @buf. */
static void isb_status_str(struct iscsi_context *ctx, int status,
			   const struct scsi_task *task, char *buf, size_t len)
{
	switch (status) {
	case SCSI_STATUS_CHECK_CONDITION:
		if (!task) {
			snprintf(buf, len, "CHECK CONDITION");
			break;
		}
		snprintf(buf, len, "CHECK CONDITION, %s (0x%x), %s (0x%04x)",
			 scsi_sense_key_str(task->sense.key), task->sense.key,
			 scsi_sense_ascq_str(task->sense.ascq),
			 task->sense.ascq);
		break;
	case SCSI_STATUS_BUSY:
		snprintf(buf, len, "BUSY");
		break;
	case SCSI_STATUS_RESERVATION_CONFLICT:
		snprintf(buf, len, "RESERVATION CONFLICT");
		break;
	case SCSI_STATUS_TASK_SET_FULL:
		snprintf(buf, len, "TASK SET FULL");
		break;
	case SCSI_STATUS_TASK_ABORTED:
		snprintf(buf, len, "TASK ABORTED");
		break;
	case SCSI_STATUS_CANCELLED:
		snprintf(buf, len, "cancelled (%s)", iscsi_get_error(ctx));
		break;
	case SCSI_STATUS_TIMEOUT:
		snprintf(buf, len, "timed out after %d s (%s)", ISB_TIMEOUT_S,
			 iscsi_get_error(ctx));
		break;
	case SCSI_STATUS_ERROR:
		snprintf(buf, len, "transport error (%s)",
			 iscsi_get_error(ctx));
		break;
	default:
		snprintf(buf, len, "SCSI status 0x%x", (unsigned int)status);
		break;
	}
}

static bool isb_is_ua(const struct scsi_task *task)
{
	return task->status == SCSI_STATUS_CHECK_CONDITION &&
	       task->sense.key == SCSI_SENSE_UNIT_ATTENTION;
}

/*
 * A synchronous setup command, repeated while it reports a unit attention
 * (POWER ON OCCURRED on a LUN's first command, a reset, a LUN added): a
 * target reports each once, and iscsi-ls, which does not retry, stops at
 * the first. On success the task is returned for the caller to read and
 * free.
 */
typedef struct scsi_task *(*isb_sync_fn)(struct iscsi_context *ctx, int lun,
					 void *arg);

static int isb_sync(struct iscsi_context *ctx, int lun, const char *what,
		    isb_sync_fn fn, void *arg, struct scsi_task **out,
		    char *msg, size_t len)
{
	struct scsi_task *task = NULL;
	char st[192];
	int i;

	for (i = 0; i < ISB_UA_RETRIES; i++) {
		task = fn(ctx, lun, arg);
		if (!task) {
			snprintf(msg, len, "%s of LUN %d: %s", what, lun,
				 iscsi_get_error(ctx));
			return -EIO;
		}
		if (task->status == SCSI_STATUS_GOOD) {
			*out = task;
			return 0;
		}
		if (!isb_is_ua(task))
			break;
		scsi_free_scsi_task(task);
		task = NULL;
	}
	if (!task) {
		snprintf(msg, len,
			 "%s of LUN %d: still a UNIT ATTENTION after %d tries",
			 what, lun, ISB_UA_RETRIES);
		return -EIO;
	}
	isb_status_str(ctx, task->status, task, st, sizeof(st));
	snprintf(msg, len, "%s of LUN %d: %s", what, lun, st);
	scsi_free_scsi_task(task);
	return -EIO;
}

static struct scsi_task *isb_tur(struct iscsi_context *ctx, int lun, void *arg)
{
	(void)arg;
	return iscsi_testunitready_sync(ctx, lun);
}

static struct scsi_task *isb_rc16(struct iscsi_context *ctx, int lun, void *arg)
{
	(void)arg;
	return iscsi_readcapacity16_sync(ctx, lun);
}

static struct scsi_task *isb_inquiry(struct iscsi_context *ctx, int lun,
				     void *arg)
{
	(void)arg;
	return iscsi_inquiry_sync(ctx, lun, 0, 0, 96);
}

static struct scsi_task *isb_report_luns(struct iscsi_context *ctx, int lun,
					 void *arg)
{
	(void)lun;
	return iscsi_reportluns_sync(ctx, 0, *(int *)arg);
}

/* ---- sessions ------------------------------------------------------- */

/* A normal session to the target, logged in, for job @idx. */
static int isb_login(struct isb_run *r, unsigned int idx,
		     struct iscsi_context **out, char *msg, size_t len)
{
	struct iscsi_context *ctx;
	size_t n;

	ctx = iscsi_create_context(r->o.initiator);
	if (!ctx) {
		snprintf(msg, len, "iscsi_create_context: out of memory");
		return -ENOMEM;
	}
	/*
	 * Every session needs an ISID of its own: the same initiator name
	 * and ISID again is the same I_T nexus, and the target would end
	 * the first session to reinstate it. A random-type ISID from the
	 * PID, with the job in the qualifier.
	 */
	if (iscsi_set_isid_random(ctx, (uint32_t)getpid() * 2654435761u >> 8,
				  idx) ||
	    iscsi_set_targetname(ctx, r->target) ||
	    iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE) ||
	    (r->user[0] &&
	     iscsi_set_initiator_username_pwd(ctx, r->user, r->passwd))) {
		snprintf(msg, len, "session %u: %s", idx, iscsi_get_error(ctx));
		goto out_destroy;
	}
	/* A dropped connection is a failure to report, not to hide. */
	iscsi_set_noautoreconnect(ctx, 1);
	iscsi_set_timeout(ctx, ISB_TIMEOUT_S);
	if (iscsi_connect_sync(ctx, r->portal)) {
		/* libiscsi's text for a refused connection ends in a newline
		 * and talks of reconnecting: say what happened first. */
		snprintf(msg, len, "connecting to %s failed (%s)", r->portal,
			 iscsi_get_error(ctx));
		n = strlen(msg);
		while (n > 1 && (msg[n - 2] == '\n' || msg[n - 2] == ' ')) {
			msg[n - 2] = ')';
			msg[--n] = '\0';
		}
		goto out_destroy;
	}
	if (iscsi_login_sync(ctx)) {
		snprintf(msg, len, "login to %s at %s as %s: %s", r->target,
			 r->portal, r->o.initiator, iscsi_get_error(ctx));
		goto out_destroy;
	}
	*out = ctx;
	return 0;
out_destroy:
	iscsi_destroy_context(ctx);
	return -EIO;
}

static void isb_logout(struct iscsi_context *ctx, bool clean)
{
	if (!ctx)
		return;
	if (clean && iscsi_is_logged_in(ctx))
		iscsi_logout_sync(ctx);
	iscsi_destroy_context(ctx);
}

/*
 * "all": the target's LUNs (REPORT LUNS) that are connected disks
 * (INQUIRY: qualifier 0, direct access; tgt's LUN 0 is its controller), as
 * many as there are jobs. The INQUIRYs stop there: O(jobs), not O(LUNs).
 */
static int isb_find_luns(struct isb_run *r, struct iscsi_context *ctx,
			 char *msg, size_t len)
{
	struct scsi_reportluns_list *list;
	struct scsi_inquiry_standard *inq;
	struct scsi_task *task, *itask;
	unsigned int want, i;
	int alloc = 16, ret;

	want = r->o.jobs < ISB_MAX_LUNS ? r->o.jobs : ISB_MAX_LUNS;
	ret = isb_sync(ctx, 0, "REPORT LUNS", isb_report_luns, &alloc, &task,
		       msg, len);
	if (ret)
		return ret;
	if (task->datain.size < 4) {
		snprintf(msg, len, "REPORT LUNS: %d bytes, no list length",
			 task->datain.size);
		scsi_free_scsi_task(task);
		return -EIO;
	}
	/* The header says how long the whole list is: ask again for all of
	 * it (16,384 LUNs are 128 KiB). */
	alloc = (int)(get_be32(task->datain.data) > (1u << 20)
			      ? (1u << 20) + 8
			      : get_be32(task->datain.data) + 8);
	scsi_free_scsi_task(task);
	ret = isb_sync(ctx, 0, "REPORT LUNS", isb_report_luns, &alloc, &task,
		       msg, len);
	if (ret)
		return ret;
	list = scsi_datain_unmarshall(task);
	if (!list) {
		scsi_free_scsi_task(task);
		snprintf(msg, len, "REPORT LUNS: a list libiscsi cannot read");
		return -EIO;
	}
	for (i = 0; i < list->num && r->nluns < want; i++) {
		ret = isb_sync(ctx, list->luns[i], "INQUIRY", isb_inquiry, NULL,
			       &itask, msg, len);
		if (ret)
			break;
		inq = scsi_datain_unmarshall(itask);
		if (inq &&
		    inq->qualifier ==
			    SCSI_INQUIRY_PERIPHERAL_QUALIFIER_CONNECTED &&
		    inq->device_type ==
			    SCSI_INQUIRY_PERIPHERAL_DEVICE_TYPE_DIRECT_ACCESS)
			r->luns[r->nluns++] = list->luns[i];
		scsi_free_scsi_task(itask);
	}
	scsi_free_scsi_task(task);
	if (ret)
		return ret;
	if (!r->nluns) {
		snprintf(msg, len,
			 "%s has no disk LUN (REPORT LUNS and INQUIRY)",
			 r->target);
		return -ENOENT;
	}
	return 0;
}

/* Log job @j in, clear its unit attentions, size its LUN, and give it its
 * buffers. */
static int isb_job_setup(struct isb_run *r, struct isb_job *j)
{
	struct scsi_readcapacity16 *rc;
	struct scsi_task *task;
	size_t i, n;
	int ret;

	if (!j->ctx) {
		ret = isb_login(r, j->idx, &j->ctx, j->msg, sizeof(j->msg));
		if (ret)
			return ret;
	}
	ret = isb_sync(j->ctx, j->lun, "TEST UNIT READY", isb_tur, NULL, &task,
		       j->msg, sizeof(j->msg));
	if (ret)
		return ret;
	scsi_free_scsi_task(task);
	ret = isb_sync(j->ctx, j->lun, "READ CAPACITY (16)", isb_rc16, NULL,
		       &task, j->msg, sizeof(j->msg));
	if (ret)
		return ret;
	rc = scsi_datain_unmarshall(task);
	if (!rc || !rc->block_length || rc->returned_lba == UINT64_MAX) {
		scsi_free_scsi_task(task);
		snprintf(j->msg, sizeof(j->msg),
			 "READ CAPACITY (16) of LUN %d: no usable answer",
			 j->lun);
		return -EIO;
	}
	j->block_len = rc->block_length;
	j->lun_bytes = (rc->returned_lba + 1) * rc->block_length;
	scsi_free_scsi_task(task);
	if (r->o.bs % j->block_len) {
		snprintf(j->msg, sizeof(j->msg),
			 "--bs %u is not a multiple of LUN %d's %" PRIu32
			 "-byte blocks",
			 r->o.bs, j->lun, j->block_len);
		return -EINVAL;
	}
	j->units = j->lun_bytes / r->o.bs;
	if (!j->units) {
		snprintf(j->msg, sizeof(j->msg),
			 "LUN %d is %" PRIu64 " bytes, less than one --bs %u",
			 j->lun, j->lun_bytes, r->o.bs);
		return -EINVAL;
	}
	/* Sequential jobs on one LUN start apart from each other. */
	j->cursor =
		(uint64_t)((unsigned __int128)j->units * j->idx / r->o.jobs);
	/* one stream per job, the same LBAs every run */
	j->rng = rng_init(ISB_SEED + j->idx);
	n = (size_t)r->o.qd * r->o.bs;
	j->bufs = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
	j->slots = calloc(r->o.qd, sizeof(*j->slots));
	if (!j->bufs || !j->slots) {
		snprintf(j->msg, sizeof(j->msg), "out of memory");
		return -ENOMEM;
	}
	/* A pattern in what is written, and every page touched before the
	 * clock starts. */
	for (i = 0; i < n; i++)
		j->bufs[i] = (uint8_t)(i * 131 + j->idx * 7 + 1);
	for (i = 0; i < r->o.qd; i++) {
		j->slots[i].job = j;
		j->slots[i].iov.iov_base = j->bufs + i * r->o.bs;
		j->slots[i].iov.iov_len = r->o.bs;
	}
	return 0;
}

/* ---- the I/O loop --------------------------------------------------- */

static bool isb_is_write(enum isb_rw rw)
{
	return rw == ISB_RANDWRITE || rw == ISB_SEQWRITE;
}

static inline uint64_t isb_next_lba(struct isb_job *j)
{
	uint64_t u;

	if (j->run->o.rw == ISB_RANDREAD || j->run->o.rw == ISB_RANDWRITE) {
		u = rng_below(&j->rng, j->units);
	} else {
		u = j->cursor++;
		if (j->cursor == j->units)
			j->cursor = 0;
	}
	return u * (j->run->o.bs / j->block_len);
}

static void isb_done(struct iscsi_context *ctx, int status, void *data,
		     void *priv);

static void isb_submit(struct isb_job *j, struct isb_slot *s)
{
	const struct isb_opts *o = &j->run->o;
	struct scsi_task *task;

	s->lba = isb_next_lba(j);
	s->task = NULL;
	/* Counted first: libiscsi may complete a command before returning
	 * (a connection found dead), and the callback uncounts it. */
	j->inflight++;
	s->t_submit = bench_now_ns();
	if (isb_is_write(o->rw))
		task = iscsi_write16_iov_task(j->ctx, j->lun, s->lba, NULL,
					      o->bs, (int)j->block_len, 0, 0, 0,
					      0, 0, isb_done, s, &s->iov, 1);
	else
		task = iscsi_read16_iov_task(j->ctx, j->lun, s->lba, o->bs,
					     (int)j->block_len, 0, 0, 0, 0, 0,
					     isb_done, s, &s->iov, 1);
	if (!task) {
		j->inflight--;
		isb_job_fail(j, -EIO, "%s(16) of LUN %d, LBA %" PRIu64 ": %s",
			     isb_is_write(o->rw) ? "WRITE" : "READ", j->lun,
			     s->lba, iscsi_get_error(j->ctx));
		return;
	}
	s->task = task;
}

static void isb_done(struct iscsi_context *ctx, int status, void *data,
		     void *priv)
{
	struct isb_slot *s = priv;
	struct isb_job *j = s->job;
	struct scsi_task *task = data ? data : s->task;
	const struct isb_opts *o = &j->run->o;
	uint64_t now = bench_now_ns();
	char st[192];

	j->inflight--;
	s->task = NULL;
	if (status == SCSI_STATUS_GOOD && task &&
	    task->residual_status != SCSI_RESIDUAL_NO_RESIDUAL &&
	    task->residual) {
		isb_job_fail(j, -EIO,
			     "%s(16) of LUN %d, LBA %" PRIu64
			     ": a short transfer, residual %zu of %u bytes",
			     isb_is_write(o->rw) ? "WRITE" : "READ", j->lun,
			     s->lba, task->residual, o->bs);
	} else if (status == SCSI_STATUS_GOOD) {
		j->ops++;
		j->bytes += o->bs;
		isb_hadd(&j->hist, now - s->t_submit);
	} else {
		isb_status_str(ctx, status, task, st, sizeof(st));
		isb_job_fail(j, -EIO, "%s(16) of LUN %d, LBA %" PRIu64 ": %s",
			     isb_is_write(o->rw) ? "WRITE" : "READ", j->lun,
			     s->lba, st);
	}
	if (task)
		scsi_free_scsi_task(task);
	if (!j->stop && now >= j->deadline)
		j->stop = true;
	if (!j->stop)
		isb_submit(j, s);
}

/* One job: QD commands in flight until the deadline, then the last ones
 * drained; everything on this thread and this session alone. */
static void *isb_job_main(void *arg)
{
	struct isb_job *j = arg;
	struct isb_run *r = j->run;
	struct pollfd pfd;
	uint64_t cpu0, now;
	unsigned int i;
	int n;

	pthread_mutex_lock(&r->gate_lock);
	while (!r->gate)
		pthread_cond_wait(&r->gate_cond, &r->gate_lock);
	if (r->gate < 0)
		j->stop = true;
	pthread_mutex_unlock(&r->gate_lock);
	cpu0 = isb_thread_cpu_ns();
	j->t_start = bench_now_ns();
	j->deadline = j->t_start + (uint64_t)(r->o.seconds * 1e9);
	for (i = 0; i < r->o.qd && !j->stop; i++)
		isb_submit(j, &j->slots[i]);
	while (j->inflight) {
		if (!j->stop &&
		    atomic_load_explicit(&r->abort, memory_order_relaxed))
			j->stop = true;
		now = bench_now_ns();
		if (!j->stop && now >= j->deadline)
			j->stop = true;
		if (now >= j->deadline + ISB_DRAIN_NS) {
			isb_job_fail(
				j, -ETIMEDOUT,
				"LUN %d: %u commands still unanswered %llu s after the end",
				j->lun, j->inflight,
				ISB_DRAIN_NS / 1000000000ull);
			break;
		}
		pfd.fd = iscsi_get_fd(j->ctx);
		pfd.events = (short)iscsi_which_events(j->ctx);
		pfd.revents = 0;
		n = poll(&pfd, 1, ISB_POLL_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			isb_job_fail(j, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (iscsi_service(j->ctx, n > 0 ? pfd.revents : 0) < 0) {
			isb_job_fail(j, -EIO, "LUN %d: the connection: %s",
				     j->lun, iscsi_get_error(j->ctx));
			break;
		}
	}
	j->t_end = bench_now_ns();
	j->cpu_ns = isb_thread_cpu_ns() - cpu0;
	return NULL;
}

/* ---- the report ----------------------------------------------------- */

/* "4K", "128K", "1M", "1536". */
static void isb_size_str(unsigned int bs, char *buf, size_t len)
{
	if (bs % (1u << 20) == 0)
		snprintf(buf, len, "%uM", bs >> 20);
	else if (bs % 1024 == 0)
		snprintf(buf, len, "%uK", bs >> 10);
	else
		snprintf(buf, len, "%u", bs);
}

/* What one job or the total did, for the table and the JSON. */
struct isb_figs {
	uint64_t ops;
	uint64_t bytes;
	double seconds;
	double iops;
	double mib_s;
	double cpu_us_per_op;
	const struct isb_hist *h;
};

static void isb_figs_set(struct isb_figs *f, uint64_t ops, uint64_t bytes,
			 uint64_t ns, uint64_t cpu_ns, const struct isb_hist *h)
{
	f->ops = ops;
	f->bytes = bytes;
	f->seconds = (double)ns / 1e9;
	f->iops = ns ? (double)ops / f->seconds : NAN;
	f->mib_s = ns ? (double)bytes / f->seconds / (1 << 20) : NAN;
	f->cpu_us_per_op = ops ? (double)cpu_ns / 1e3 / (double)ops : NAN;
	f->h = h;
}

static json_t *isb_json_figs(const struct isb_figs *f, json_t *lun)
{
	json_t *o = json_object();

	if (!o) {
		json_decref(lun);
		return NULL;
	}
	if (bench_jset(o, "lun", lun) ||
	    bench_jset(o, "ops", json_integer((json_int_t)f->ops)) ||
	    bench_jset(o, "bytes", json_integer((json_int_t)f->bytes)) ||
	    bench_jset(o, "seconds", json_real(f->seconds)) ||
	    bench_jset(o, "iops", bench_jnum(f->iops)) ||
	    bench_jset(o, "mib_per_s", bench_jnum(f->mib_s)) ||
	    bench_jset(o, "lat_mean_us", bench_jnum(isb_hmean(f->h) / 1e3)) ||
	    bench_jset(o, "lat_p50_us", bench_jnum(isb_hpct(f->h, 50) / 1e3)) ||
	    bench_jset(o, "lat_p99_us", bench_jnum(isb_hpct(f->h, 99) / 1e3)) ||
	    bench_jset(o, "lat_p999_us",
		       bench_jnum(isb_hpct(f->h, 99.9) / 1e3)) ||
	    bench_jset(o, "lat_max_us",
		       f->h->n ? json_real((double)f->h->max / 1e3)
			       : json_null()) ||
	    bench_jset(o, "client_cpu_us_per_op",
		       bench_jnum(f->cpu_us_per_op))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int isb_table_figs(struct bench_table *t, const char *who,
			  const char *lun, const struct isb_figs *f)
{
	return bench_table_add(t, "%s", who) ?: bench_table_add(t, "%s", lun) ?:
	       bench_table_add(t, "%" PRIu64, f->ops) ?:
	       bench_table_add(t, "%.0f", f->iops) ?:
	       bench_table_add(t, "%.1f", f->mib_s) ?:
	       bench_table_add(t, "%.1f", isb_hmean(f->h) / 1e3) ?:
	       bench_table_add(t, "%.1f", isb_hpct(f->h, 50) / 1e3) ?:
	       bench_table_add(t, "%.1f", isb_hpct(f->h, 99) / 1e3) ?:
	       bench_table_add(t, "%.1f", isb_hpct(f->h, 99.9) / 1e3) ?:
	       bench_table_add(t, "%.1f", (double)f->h->max / 1e3) ?:
	       bench_table_add(t, "%.2f", f->cpu_us_per_op);
}

static json_t *isb_json_extra(const struct isb_run *r,
			      const struct isb_figs *jf,
			      const struct isb_figs *tf)
{
	json_t *x = json_object(), *params = json_object(),
	       *luns = json_array(), *per = json_array();
	unsigned int i;

	if (!x || !params || !luns || !per)
		goto out_free;
	for (i = 0; i < r->nluns; i++)
		if (json_array_append_new(luns, json_integer(r->luns[i])))
			goto out_free;
	for (i = 0; i < r->o.jobs; i++) {
		json_t *o = isb_json_figs(&jf[i], json_integer(r->jobs[i].lun));

		if (!o || bench_jset(o, "job", json_integer(i)) ||
		    json_array_append_new(per, o))
			goto out_free;
	}
	if (bench_jset(params, "url", json_string(r->o.url)) ||
	    bench_jset(params, "portal", json_string(r->portal)) ||
	    bench_jset(params, "target", json_string(r->target)) ||
	    bench_jset(params, "initiator", json_string(r->o.initiator)) ||
	    bench_jset(params, "luns", luns))
		goto out_params;
	luns = NULL;
	if (bench_jset(params, "rw", json_string(isb_rw_name[r->o.rw])) ||
	    bench_jset(params, "bs", json_integer(r->o.bs)) ||
	    bench_jset(params, "qd", json_integer(r->o.qd)) ||
	    bench_jset(params, "jobs", json_integer(r->o.jobs)) ||
	    bench_jset(params, "seconds", json_real(r->o.seconds)) ||
	    bench_jset(params, "lun_bytes",
		       json_integer((json_int_t)r->jobs[0].lun_bytes)) ||
	    bench_jset(params, "block_length",
		       json_integer(r->jobs[0].block_len)) ||
	    bench_jset(x, "params", params))
		goto out_x;
	params = NULL;
	if (bench_jset(x, "per_job", per))
		goto out_x;
	per = NULL;
	if (bench_jset(x, "total", isb_json_figs(tf, json_null())))
		goto out_x;
	return x;
out_params:
	/* bench_jset() took the value it was given, whatever it returned. */
	luns = NULL;
	goto out_free;
out_x:
	params = NULL;
	per = NULL;
out_free:
	json_decref(per);
	json_decref(luns);
	json_decref(params);
	json_decref(x);
	return NULL;
}

static int isb_print_text(const struct isb_run *r, struct bench_report *rep,
			  const struct isb_figs *jf, const struct isb_figs *tf)
{
	struct bench_table *t;
	char lun[16];
	unsigned int i;
	int ret;

	ret = bench_report_print(rep, stdout, false);
	if (ret)
		return ret;
	ret = bench_table_create(&t, 11, "llrrrrrrrrr");
	if (ret)
		return ret;
	ret = bench_table_add(t, "job") ?: bench_table_add(t, "LUN") ?:
	      bench_table_add(t, "ops") ?: bench_table_add(t, "IOPS") ?:
	      bench_table_add(t, "MiB/s") ?: bench_table_add(t, "mean us") ?:
	      bench_table_add(t, "p50 us") ?: bench_table_add(t, "p99 us") ?:
	      bench_table_add(t, "p99.9 us") ?: bench_table_add(t, "max us") ?:
	      bench_table_add(t, "client CPU us/op");
	for (i = 0; i < r->o.jobs && !ret; i++) {
		char who[16];

		snprintf(who, sizeof(who), "%u", i);
		snprintf(lun, sizeof(lun), "%d", r->jobs[i].lun);
		ret = isb_table_figs(t, who, lun, &jf[i]);
	}
	if (!ret)
		ret = isb_table_figs(t, "total", "-", tf);
	if (!ret) {
		fputc('\n', stdout);
		ret = bench_table_print(t, stdout);
	}
	bench_table_destroy(t);
	return ret;
}

static int isb_report(struct isb_run *r)
{
	struct isb_figs *jf, tf;
	struct bench_report *rep;
	struct bench_result res;
	uint64_t ops = 0, bytes = 0, cpu = 0, t_first = UINT64_MAX;
	char bs[16], name[96], lunlist[96];
	size_t off = 0;
	unsigned int i;
	json_t *extra;
	double ns;
	int ret;

	jf = calloc(r->o.jobs, sizeof(*jf));
	if (!jf)
		return -ENOMEM;
	for (i = 0; i < r->o.jobs; i++) {
		struct isb_job *j = &r->jobs[i];

		isb_figs_set(&jf[i], j->ops, j->bytes, j->t_end - j->t_start,
			     j->cpu_ns, &j->hist);
		isb_hmerge(&r->total, &j->hist);
		ops += j->ops;
		bytes += j->bytes;
		cpu += j->cpu_ns;
		if (j->t_start < t_first)
			t_first = j->t_start;
		if (j->t_end > r->t_end)
			r->t_end = j->t_end;
	}
	/* The total's rate is over the wall time from the first job's start
	 * to the last one's end. */
	isb_figs_set(&tf, ops, bytes, r->t_end - t_first, cpu, &r->total);
	isb_size_str(r->o.bs, bs, sizeof(bs));
	lunlist[0] = '\0';
	for (i = 0; i < r->nluns && off < sizeof(lunlist) - 16; i++)
		off += (size_t)snprintf(lunlist + off, sizeof(lunlist) - off,
					"%s%d", i ? "," : "", r->luns[i]);
	if (i < r->nluns)
		snprintf(lunlist + off, sizeof(lunlist) - off, ",...");

	ret = bench_report_create(&rep, "iscsi");
	if (ret)
		goto out_free;
	ret = bench_report_note(
		rep,
		"%s at %s: %u session%s over LUN%s %s (%" PRIu64
		" MiB, %" PRIu32 "-byte blocks)",
		r->target, r->portal, r->o.jobs, r->o.jobs == 1 ? "" : "s",
		r->nluns == 1 ? "" : "s", lunlist, r->jobs[0].lun_bytes >> 20,
		r->jobs[0].block_len);
	if (!ret)
		ret = bench_report_note(
			rep,
			"%s %s, QD %u per session, %.2f s; %s, aligned to %u bytes within each LUN's READ CAPACITY",
			bs, isb_rw_name[r->o.rw], r->o.qd, r->o.seconds,
			r->o.rw == ISB_RANDREAD || r->o.rw == ISB_RANDWRITE
				? "random LBAs from a fixed seed"
				: "sequential LBAs, each job from its own start, wrapping",
			r->o.bs);
	if (!ret)
		ret = bench_report_note(
			rep,
			"client: libiscsi's async API, one thread, session and poll loop per job; %s(16) into and out of our own buffers; latency from submission to the completion callback, in a histogram of 1/32-octave buckets",
			isb_is_write(r->o.rw) ? "WRITE" : "READ");
	for (i = 0; i < r->o.jobs && !ret; i++) {
		ns = jf[i].ops ? jf[i].seconds * 1e9 / (double)jf[i].ops : NAN;
		bench_result_set(&res, &ns, 1, jf[i].ops);
		snprintf(name, sizeof(name), "job %u, LUN %d", i,
			 r->jobs[i].lun);
		ret = bench_report_add(rep, "iscsi", name, jf[i].ops, &res,
				       NAN);
	}
	if (!ret) {
		ns = ops ? tf.seconds * 1e9 / (double)ops : NAN;
		bench_result_set(&res, &ns, 1, ops);
		snprintf(name, sizeof(name), "total, %s %s QD%u x %u", bs,
			 isb_rw_name[r->o.rw], r->o.qd, r->o.jobs);
		ret = bench_report_add(rep, "iscsi", name, ops, &res, NAN);
	}
	if (ret)
		goto out_report;
	if (r->o.common.json) {
		extra = isb_json_extra(r, jf, &tf);
		if (!extra) {
			ret = -ENOMEM;
			goto out_report;
		}
		ret = bench_report_print_json(rep, stdout, extra);
		json_decref(extra);
	} else {
		ret = isb_print_text(r, rep, jf, &tf);
	}
out_report:
	bench_report_destroy(rep);
out_free:
	free(jf);
	return ret;
}

/* ---- options -------------------------------------------------------- */

static void isb_usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm-bench iscsi URL [--rw MODE] [--bs SIZE] [--qd N] [--jobs J]\n"
		"                   [--seconds S] [--initiator IQN] [--json] [--quick]\n\n"
		"Drive one iSCSI target from J threads, each with its own session (libiscsi,\n"
		"asynchronous), N commands in flight per session, for S seconds. Prints IOPS,\n"
		"MiB/s and latency (mean, p50, p99, p99.9, max) per job and in total.\n\n"
		"  URL               iscsi://[USER[%%PASSWORD]@]HOST[:PORT]/TARGET/LUNS\n"
		"                    LUNS: a LUN, a list (0,1,2), or all (REPORT LUNS, the\n"
		"                    disks among them); jobs take them in turn. A LUN is the\n"
		"                    raw field, as libiscsi writes it: LUN N >= 256 is 0x4000|N\n"
		"  --rw MODE         randread (default), randwrite, seqread, seqwrite\n"
		"  --bs SIZE         bytes per command, a multiple of 512 up to 8M (4k)\n"
		"  --qd N            commands in flight per session, 1..%u (%u)\n"
		"  --jobs J          threads and sessions, 1..%u (1)\n"
		"  --seconds S       how long, 0.01..%.0f (%.0f; --quick %.1f)\n"
		"  --initiator IQN   the initiator name (%s)\n"
		"  --json            one JSON object instead of the tables\n"
		"Random LBAs come from a fixed seed (the same every run), aligned to SIZE\n"
		"within the LUN's READ CAPACITY. --reps is accepted and ignored (one run).\n"
		"Exit status 0; 1 on a usage error, a failed login, any command that fails\n"
		"(a CHECK CONDITION, a transport error, a short transfer) or no answer.\n",
		ISB_MAX_QD, ISB_QD, ISB_MAX_JOBS, ISB_MAX_SECONDS, ISB_SECONDS,
		ISB_QUICK_SECONDS, ISB_INITIATOR);
}

enum {
	ISB_OPT_RW = 0x200,
	ISB_OPT_BS,
	ISB_OPT_QD,
	ISB_OPT_JOBS,
	ISB_OPT_SECONDS,
	ISB_OPT_INITIATOR,
};

/* -1 to go on, else the exit status. */
static int isb_parse(int argc, char **argv, struct isb_opts *o)
{
	uint32_t none;
	static const struct option lopts[] = {
		BENCH_COMMON_LONGOPTS,
		{"rw", required_argument, NULL, ISB_OPT_RW},
		{"bs", required_argument, NULL, ISB_OPT_BS},
		{"qd", required_argument, NULL, ISB_OPT_QD},
		{"jobs", required_argument, NULL, ISB_OPT_JOBS},
		{"seconds", required_argument, NULL, ISB_OPT_SECONDS},
		{"initiator", required_argument, NULL, ISB_OPT_INITIATOR},
		{NULL, 0, NULL, 0},
	};
	unsigned int i;
	uint64_t v;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, BENCH_SHORTOPTS, lopts, NULL)) !=
	       -1) {
		ret = bench_common_opt(&o->common, opt, optarg, "iscsi");
		if (ret < 0)
			return 1;
		if (ret)
			continue;
		switch (opt) {
		case 'h':
			isb_usage(stdout);
			return 0;
		case ISB_OPT_RW:
			for (i = 0; i < ARRAY_SIZE(isb_rw_name); i++)
				if (strcmp(optarg, isb_rw_name[i]) == 0)
					break;
			if (i == ARRAY_SIZE(isb_rw_name)) {
				bench_err(
					"iscsi",
					"--rw '%s': randread, randwrite, seqread or seqwrite",
					optarg);
				return 1;
			}
			o->rw = (enum isb_rw)i;
			break;
		case ISB_OPT_BS:
			if (parse_size(optarg, ISB_MAX_BS, &v) || !v ||
			    v % ISB_MIN_BS) {
				bench_err(
					"iscsi",
					"--bs '%s': need a multiple of %u up to %u (K, M: powers of 1024)",
					optarg, ISB_MIN_BS, ISB_MAX_BS);
				return 1;
			}
			o->bs = (unsigned int)v;
			break;
		case ISB_OPT_QD:
			if (bench_parse_u64(optarg, 1, ISB_MAX_QD, &v)) {
				bench_err("iscsi", "--qd '%s': need 1..%u",
					  optarg, ISB_MAX_QD);
				return 1;
			}
			o->qd = (unsigned int)v;
			break;
		case ISB_OPT_JOBS:
			if (bench_parse_u64(optarg, 1, ISB_MAX_JOBS, &v)) {
				bench_err("iscsi", "--jobs '%s': need 1..%u",
					  optarg, ISB_MAX_JOBS);
				return 1;
			}
			o->jobs = (unsigned int)v;
			break;
		case ISB_OPT_SECONDS:
			if (bench_parse_double(optarg, 0.01, ISB_MAX_SECONDS,
					       &o->seconds)) {
				bench_err("iscsi",
					  "--seconds '%s': need 0.01..%.0f",
					  optarg, ISB_MAX_SECONDS);
				return 1;
			}
			o->have_seconds = true;
			break;
		case ISB_OPT_INITIATOR:
			if (strncmp(optarg, "iqn.", 4) != 0 &&
			    strncmp(optarg, "eui.", 4) != 0 &&
			    strncmp(optarg, "naa.", 4) != 0) {
				bench_err(
					"iscsi",
					"--initiator '%s': an iSCSI name (iqn., eui. or naa.)",
					optarg);
				return 1;
			}
			o->initiator = optarg;
			break;
		default:
			cli_suggest_option(stderr, argv[0], lopts,
					   argv[optind - 1]);
			isb_usage(stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		isb_usage(stderr);
		return 1;
	}
	if (bench_only(&o->common, "iscsi", NULL, 0, &none))
		return 1;
	o->url = argv[optind];
	if ((uint64_t)o->qd * o->bs > ISB_MAX_INFLIGHT) {
		bench_err(
			"iscsi",
			"--qd %u x --bs %u: at most %u MiB in flight per session (the buffers are allocated up front)",
			o->qd, o->bs, ISB_MAX_INFLIGHT >> 20);
		return 1;
	}
	if (!o->have_seconds && o->common.quick)
		o->seconds = ISB_QUICK_SECONDS;
	return -1;
}

/* One LUN of the URL's list: the raw 16-bit field, decimal or 0x hex. */
static int isb_parse_lun(const char *s, size_t n, int *out)
{
	char buf[16], *end;
	unsigned long v;

	if (!n || n >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 0);
	if (*end || errno || v > 0xffff)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/*
 * Split the URL into what libiscsi parses (portal, target, CHAP user) and
 * the LUN list, which it does not know: the list is replaced by its first
 * LUN (or 0 for "all") before iscsi_parse_full_url() sees it.
 */
static int isb_parse_url(struct isb_run *r)
{
	const char *url = r->o.url, *slash, *p, *comma;
	struct iscsi_context *ctx;
	struct iscsi_url *iu;
	size_t head;
	char *copy;
	int lun;

	if (strncmp(url, "iscsi://", 8) != 0) {
		bench_err("iscsi",
			  "URL '%s': need iscsi://HOST[:PORT]/TARGET/LUNS",
			  url);
		return -EINVAL;
	}
	slash = strrchr(url + 8, '/');
	if (!slash || slash == strchr(url + 8, '/')) {
		bench_err(
			"iscsi",
			"URL '%s': no target and LUN in it (iscsi://HOST[:PORT]/TARGET/LUNS)",
			url);
		return -EINVAL;
	}
	p = slash + 1;
	if (strcmp(p, "all") == 0) {
		r->all_luns = true;
	} else {
		while (*p) {
			comma = strchr(p, ',');
			if (!comma)
				comma = p + strlen(p);
			if (r->nluns == ISB_MAX_LUNS ||
			    isb_parse_lun(p, (size_t)(comma - p), &lun)) {
				bench_err(
					"iscsi",
					"URL '%s': LUNS '%s': need all, or up to %u LUNs 0..65535 separated by commas",
					url, slash + 1, ISB_MAX_LUNS);
				return -EINVAL;
			}
			r->luns[r->nluns++] = lun;
			p = *comma ? comma + 1 : comma;
			if (!*p && *comma) {
				r->nluns = 0;
				bench_err("iscsi",
					  "URL '%s': LUNS ends in a comma",
					  url);
				return -EINVAL;
			}
		}
		if (!r->nluns) {
			bench_err("iscsi", "URL '%s': no LUN after the target",
				  url);
			return -EINVAL;
		}
	}
	head = (size_t)(slash - url);
	copy = malloc(head + 16);
	ctx = iscsi_create_context(r->o.initiator);
	if (!copy || !ctx) {
		free(copy);
		if (ctx)
			iscsi_destroy_context(ctx);
		bench_err("iscsi", "out of memory");
		return -ENOMEM;
	}
	snprintf(copy, head + 16, "%.*s/%d", (int)head, url,
		 r->all_luns ? 0 : r->luns[0]);
	iu = iscsi_parse_full_url(ctx, copy);
	if (!iu) {
		bench_err("iscsi", "URL '%s': %s", url, iscsi_get_error(ctx));
		free(copy);
		iscsi_destroy_context(ctx);
		return -EINVAL;
	}
	snprintf(r->portal, sizeof(r->portal), "%s", iu->portal);
	snprintf(r->target, sizeof(r->target), "%s", iu->target);
	snprintf(r->user, sizeof(r->user), "%s", iu->user);
	snprintf(r->passwd, sizeof(r->passwd), "%s", iu->passwd);
	iscsi_destroy_url(iu);
	iscsi_destroy_context(ctx);
	free(copy);
	if (!r->target[0]) {
		bench_err("iscsi", "URL '%s': no target name", url);
		return -EINVAL;
	}
	return 0;
}

/* ---- the command ---------------------------------------------------- */

static void isb_free(struct isb_run *r, bool clean)
{
	unsigned int i;

	if (!r->jobs)
		return;
	for (i = 0; i < r->o.jobs; i++) {
		struct isb_job *j = &r->jobs[i];

		/* A session with commands in flight is not logged out
		 * politely: destroying it cancels them (their callbacks
		 * free the tasks). */
		isb_logout(j->ctx, clean && !j->err && !j->inflight);
		j->ctx = NULL;
		free(j->bufs);
		free(j->slots);
	}
	free(r->jobs);
	r->jobs = NULL;
}

/* Set the jobs up one after the other: their logins and READ CAPACITYs
 * are not measured. */
static int isb_setup(struct isb_run *r)
{
	unsigned int i;
	int ret;

	r->jobs = calloc(r->o.jobs, sizeof(*r->jobs));
	if (!r->jobs) {
		bench_err("iscsi", "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < r->o.jobs; i++) {
		r->jobs[i].run = r;
		r->jobs[i].idx = i;
	}
	if (r->all_luns) {
		char msg[sizeof(r->jobs[0].msg)];

		ret = isb_login(r, 0, &r->jobs[0].ctx, msg, sizeof(msg));
		if (!ret)
			ret = isb_find_luns(r, r->jobs[0].ctx, msg,
					    sizeof(msg));
		if (ret) {
			bench_err("iscsi", "%s", msg);
			return ret;
		}
	}
	for (i = 0; i < r->o.jobs; i++) {
		struct isb_job *j = &r->jobs[i];

		j->lun = r->luns[i % r->nluns];
		bench_progress("iscsi: logging in session %u of %u", i + 1,
			       r->o.jobs);
		ret = isb_job_setup(r, j);
		if (ret) {
			bench_err("iscsi", "job %u: %s", i, j->msg);
			return ret;
		}
	}
	bench_progress_done();
	return 0;
}

/* Open the start gate with @how (1 go, -1 give up) for every thread. */
static void isb_gate(struct isb_run *r, int how)
{
	pthread_mutex_lock(&r->gate_lock);
	r->gate = how;
	pthread_cond_broadcast(&r->gate_cond);
	pthread_mutex_unlock(&r->gate_lock);
}

/* Start every job at once, wait for all; 0 or the first job's error. */
static int isb_run_jobs(struct isb_run *r)
{
	unsigned int i;
	int ret = 0, err = 0;

	for (i = 0; i < r->o.jobs; i++) {
		err = pthread_create(&r->jobs[i].thread, NULL, isb_job_main,
				     &r->jobs[i]);
		if (err)
			break;
		r->jobs[i].started = true;
	}
	if (err) {
		bench_err("iscsi", "pthread_create: %s", strerror(err));
		ret = -err;
		isb_gate(r, -1);
	} else {
		bench_progress("iscsi: %u job%s for %.2f s", r->o.jobs,
			       r->o.jobs == 1 ? "" : "s", r->o.seconds);
		isb_gate(r, 1);
	}
	for (i = 0; i < r->o.jobs; i++)
		if (r->jobs[i].started)
			pthread_join(r->jobs[i].thread, NULL);
	bench_progress_done();
	for (i = 0; i < r->o.jobs && !ret; i++)
		if (r->jobs[i].err) {
			bench_err("iscsi", "job %u: %s", i, r->jobs[i].msg);
			ret = r->jobs[i].err;
		}
	return ret;
}

int bench_iscsi(int argc, char **argv)
{
	struct isb_run *r;
	int ret, status = 1;

	r = calloc(1, sizeof(*r));
	if (!r) {
		bench_err("iscsi", "out of memory");
		return 1;
	}
	r->o = (struct isb_opts){
		.initiator = ISB_INITIATOR,
		.rw = ISB_RANDREAD,
		.bs = ISB_BS,
		.qd = ISB_QD,
		.jobs = 1,
		.seconds = ISB_SECONDS,
	};
	atomic_init(&r->abort, false);
	pthread_mutex_init(&r->gate_lock, NULL);
	pthread_cond_init(&r->gate_cond, NULL);
	ret = isb_parse(argc, argv, &r->o);
	if (ret >= 0) {
		free(r);
		return ret ? CLI_EXIT_USAGE : 0; /* 1: the command line */
	}
	/* A target that closes the connection must fail a command, not
	 * end the process with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (isb_parse_url(r) || isb_setup(r))
		goto out;
	if (isb_run_jobs(r))
		goto out;
	ret = isb_report(r);
	if (ret) {
		bench_err("iscsi", "printing the report: %s", strerror(-ret));
		goto out;
	}
	status = 0;
out:
	isb_free(r, status == 0);
	pthread_cond_destroy(&r->gate_cond);
	pthread_mutex_destroy(&r->gate_lock);
	free(r);
	return status;
}
