// SPDX-License-Identifier: MIT
/*
 * The TCMU front end: backstores made through configfs, one epoll loop
 * thread serving every device's ring (no thread per LUN), a manager thread
 * that follows LUNs added and removed at run time, and the tcm_loop fabric.
 *
 * Threads: the caller's (start and stop: configfs), the loop (rings only:
 * it never touches configfs, because a configfs write such as a LUN link
 * waits for the kernel's INQUIRY, which only the loop can answer), and the
 * manager (configfs, after start). The device array belongs to whichever
 * of start, manager and stop runs (never two at once); the loop reaches a
 * device only through its epoll registration and forgets it on request.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "parse.h"
#include "lun.h"
#include "target.h"
#include "tcmu.h"
#include "tcmu_i.h"

#define CFS_TARGET "/sys/kernel/config/target"
#define UIO_CLASS "/sys/class/uio"
/* the subtype of dev_config: the uio name ends "/NAME/sdswarm/NAME" */
#define TCMU_SUBTYPE "sdswarm"
#define PATH_LEN 512
/* the directories kept: at most ~70 bytes with the config's 31-byte names */
#define DIR_LEN 160
/* how often the manager looks at the LUN generation */
#define MGR_POLL_MS 200
/* how long a /dev/uioN node may take to appear after enable */
#define UIO_NODE_WAIT_MS 2000

struct tcmu_fe {
	struct target *target; /* the registry; tgt is target->scsi */
	struct scsi_target *tgt;
	struct cfg_tcmu cfg;
	uint32_t hba_id;
	char hba_dir[DIR_LEN];
	char wwn_dir[DIR_LEN];
	char tpg_dir[DIR_LEN];
	char wwn[32];
	char init_wwn[32];
	bool made_hba, made_wwn, made_tpg, made_nexus;

	/* exported LUNs, sorted by LUN number */
	struct tcmu_dev **devs;
	unsigned int ndevs, cap;
	unsigned int uio_hint;

	/* the loop */
	int epfd, efd;
	pthread_t loop;
	bool loop_running;
	struct scsi_stats stats;
	struct tcmu_serve_ctx ctx;
	struct tcmu_dev *timers;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tcmu_dev *detach; /* a request to the loop, under lock */
	bool stop_loop; /* under lock */

	/* TCM-USER netlink events, or -1 */
	int nlfd;
	uint16_t nl_family;
	uint8_t nl_tag; /* its epoll data.ptr */

	/* the manager */
	int mefd;
	pthread_t mgr;
	bool mgr_running;
	unsigned int gen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- configfs -------------------------------------------------------- */

static int write_str(const char *path, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, s, n);
	if (w < 0)
		ret = -errno;
	else if ((size_t)w != n)
		ret = -EIO;
	close(fd);
	return ret;
}

static int write_attr(const char *dir, const char *attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int write_attr(const char *dir, const char *attr, const char *fmt, ...)
{
	char path[PATH_LEN], val[128];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	ret = write_str(path, val);
	if (ret)
		log_debug("tcmu: %s <- %s: %s", path, val, strerror(-ret));
	return ret;
}

static int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static int make_dir(const char *path, bool *made)
{
	if (mkdir(path, 0755) == 0) {
		if (made)
			*made = true;
		return 0;
	}
	return errno == EEXIST && made ? 0 : -errno;
}

static void dev_name(const struct tcmu_fe *fe, uint32_t lun, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s%u", fe->cfg.name_prefix, lun);
}

/* ---- uio ------------------------------------------------------------- */

/* Whether uio device @n is the one the kernel made for @want. */
static bool uio_is(unsigned int n, const char *want)
{
	char path[PATH_LEN], name[PATH_LEN];

	snprintf(path, sizeof(path), UIO_CLASS "/uio%u/name", n);
	return read_str(path, name, sizeof(name)) == 0 &&
	       strcmp(name, want) == 0;
}

/*
 * The uio minor of backstore @name. Minors are handed out lowest-free, so
 * in a run that creates devices one after another the next is usually
 * the hint; otherwise a scan of the class: O(uio devices).
 */
static int uio_find(struct tcmu_fe *fe, const char *name, unsigned int *out)
{
	char want[PATH_LEN];
	struct dirent *de;
	unsigned int n;
	DIR *d;

	snprintf(want, sizeof(want), "tcm-user/%u/%s/" TCMU_SUBTYPE "/%s",
		 fe->hba_id, name, name);
	if (uio_is(fe->uio_hint, want)) {
		*out = fe->uio_hint;
		return 0;
	}
	d = opendir(UIO_CLASS);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "uio%u", &n) == 1 && uio_is(n, want)) {
			closedir(d);
			*out = n;
			return 0;
		}
	}
	closedir(d);
	return -ENOENT;
}

static int uio_open(unsigned int n)
{
	char path[64];
	int i, fd = -1;

	snprintf(path, sizeof(path), "/dev/uio%u", n);
	/* devtmpfs makes the node as the device registers; udev may lag */
	for (i = 0; i < UIO_NODE_WAIT_MS / 10; i++) {
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		usleep(10000);
	}
	return fd < 0 ? -errno : fd;
}

static int uio_map_size(unsigned int n, size_t *size)
{
	char path[PATH_LEN], buf[64];
	uint64_t v;
	int ret;

	snprintf(path, sizeof(path), UIO_CLASS "/uio%u/maps/map0/size", n);
	ret = read_str(path, buf, sizeof(buf));
	if (ret)
		return ret;
	/* the kernel's "0x%lx" */
	if (parse_u64(buf, 0, SIZE_MAX, &v) || !v)
		return -EPROTO;
	*size = (size_t)v;
	return 0;
}

/* ---- the loop thread ------------------------------------------------- */

static void loop_kick(struct tcmu_fe *fe)
{
	uint64_t one = 1;

	if (write(fe->efd, &one, sizeof(one)) < 0)
		log_debug("tcmu: eventfd: %m");
}

static void timer_add(struct tcmu_fe *fe, struct tcmu_dev *d)
{
	if (d->on_timer || tcmu_dev_next_due(d) == UINT64_MAX)
		return;
	d->on_timer = true;
	d->timer_next = fe->timers;
	fe->timers = d;
}

static void timer_del(struct tcmu_fe *fe, struct tcmu_dev *d)
{
	struct tcmu_dev **p;

	for (p = &fe->timers; *p; p = &(*p)->timer_next) {
		if (*p == d) {
			*p = d->timer_next;
			break;
		}
	}
	d->on_timer = false;
	d->timer_next = NULL;
}

/* Serves the delayed commands now due; returns the epoll timeout. O(devices
 * with delayed commands), none in a run without delay faults. */
static int timers_run(struct tcmu_fe *fe)
{
	struct tcmu_dev **p = &fe->timers, *d;
	uint64_t now = now_ns(), next = UINT64_MAX, due;

	while ((d = *p)) {
		due = tcmu_dev_next_due(d);
		if (due <= now) {
			tcmu_dev_serve(&fe->ctx, d, now);
			due = tcmu_dev_next_due(d);
		}
		if (d->broken)
			due = UINT64_MAX; /* never served again */
		if (due == UINT64_MAX) {
			*p = d->timer_next;
			d->on_timer = false;
			d->timer_next = NULL;
			continue;
		}
		if (due < next)
			next = due;
		p = &d->timer_next;
	}
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static void serve_event(struct tcmu_fe *fe, struct tcmu_dev *d, uint32_t ev)
{
	uint32_t count;

	if (ev & (EPOLLERR | EPOLLHUP)) {
		/* the kernel unregistered the device under us */
		epoll_ctl(fe->epfd, EPOLL_CTL_DEL, d->fd, NULL);
		timer_del(fe, d);
		d->broken = true;
		log_lun_warn(d->lun, "tcmu: uio device gone: no longer served");
		return;
	}
	/* uio's poll stays readable until the event count is read */
	if (read(d->fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_lun_debug(d->lun, "tcmu: uio read: %m");
	tcmu_dev_serve(&fe->ctx, d, now_ns());
	timer_add(fe, d);
}

static const char *nl_cmd_name(uint8_t cmd)
{
	switch (cmd) {
	case TCMU_CMD_ADDED_DEVICE:
		return "added";
	case TCMU_CMD_REMOVED_DEVICE:
		return "removed";
	case TCMU_CMD_RECONFIG_DEVICE:
		return "reconfigured";
	default:
		return "changed";
	}
}

/* Whether uio name @dev is one of ours: "tcm-user/H/NAME/sdswarm/NAME". */
static bool nl_ours(const struct tcmu_fe *fe, const char *dev)
{
	char want[64];

	snprintf(want, sizeof(want), "tcm-user/%u/%s", fe->hba_id,
		 fe->cfg.name_prefix);
	return strncmp(dev, want, strlen(want)) == 0 &&
	       strstr(dev, "/" TCMU_SUBTYPE "/");
}

/* The kernel's events: ours at debug level, a change to one of ours that
 * this daemon did not make (a resize, a new dev_config) as a warning. */
static void nl_event(struct tcmu_fe *fe)
{
	uint8_t buf[8192];
	struct tcmu_nl_event ev;
	ssize_t n;

	n = recv(fe->nlfd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n <= 0) {
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			log_debug("tcmu: netlink: %m");
		return;
	}
	if (tcmu_nl_parse(buf, (size_t)n, fe->nl_family, &ev) != 1)
		return;
	if (ev.cmd == TCMU_CMD_RECONFIG_DEVICE && nl_ours(fe, ev.device)) {
		if (ev.has_size)
			log_warn(
				"tcmu: %s resized to %llu bytes through configfs: sdswarm's LUN keeps its size",
				ev.device, (unsigned long long)ev.dev_size);
		else
			log_warn("tcmu: %s reconfigured through configfs",
				 ev.device);
		return;
	}
	log_debug("tcmu: kernel: %s %s (uio%d)", nl_cmd_name(ev.cmd), ev.device,
		  (int)ev.minor);
}

/* Handles a detach request; returns true when the loop must end. */
static bool loop_requests(struct tcmu_fe *fe)
{
	uint64_t v;
	bool stop;

	if (read(fe->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_debug("tcmu: eventfd read: %m");
	pthread_mutex_lock(&fe->lock);
	if (fe->detach) {
		epoll_ctl(fe->epfd, EPOLL_CTL_DEL, fe->detach->fd, NULL);
		timer_del(fe, fe->detach);
		fe->detach = NULL;
		pthread_cond_broadcast(&fe->cond);
	}
	stop = fe->stop_loop;
	pthread_mutex_unlock(&fe->lock);
	return stop;
}

static void *loop_main(void *arg)
{
	struct tcmu_fe *fe = arg;
	struct epoll_event evs[64];
	int n, i, timeout = -1;
	bool req;

	for (;;) {
		n = epoll_wait(fe->epfd, evs, 64, timeout);
		if (n < 0 && errno != EINTR) {
			log_err("tcmu: epoll_wait: %m");
			break;
		}
		req = false;
		for (i = 0; i < n; i++) {
			if (!evs[i].data.ptr)
				req = true;
			else if (evs[i].data.ptr == &fe->nl_tag)
				nl_event(fe);
			else
				serve_event(fe, evs[i].data.ptr, evs[i].events);
		}
		timeout = timers_run(fe);
		/* after the batch: no event of a detached device is left */
		if (req && loop_requests(fe))
			break;
	}
	return NULL;
}

/* Makes the loop forget @d; returns once it has. */
static void loop_detach(struct tcmu_fe *fe, struct tcmu_dev *d)
{
	if (!fe->loop_running) {
		epoll_ctl(fe->epfd, EPOLL_CTL_DEL, d->fd, NULL);
		return;
	}
	pthread_mutex_lock(&fe->lock);
	while (fe->detach)
		pthread_cond_wait(&fe->cond, &fe->lock);
	fe->detach = d;
	loop_kick(fe);
	while (fe->detach == d)
		pthread_cond_wait(&fe->cond, &fe->lock);
	pthread_mutex_unlock(&fe->lock);
}

/* ---- one backstore --------------------------------------------------- */

static void dev_dir(const struct tcmu_fe *fe, uint32_t lun, char *buf,
		    size_t len)
{
	char name[64];

	dev_name(fe, lun, name, sizeof(name));
	snprintf(buf, len, "%s/%s", fe->hba_dir, name);
}

/* configures and enables the backstore in @dir (mkdir'ed) */
static int dev_configure(struct tcmu_fe *fe, uint32_t lun, const char *dir)
{
	struct lun_info info;
	char name[64];
	int ret;

	ret = lun_get(fe->tgt->luns, lun, &info);
	if (ret)
		return ret;
	dev_name(fe, lun, name, sizeof(name));
	/* one option a write: a rejected one is then named in the log */
	ret = write_attr(dir, "control", "dev_config=" TCMU_SUBTYPE "/%s",
			 name);
	if (!ret)
		ret = write_attr(dir, "control", "dev_size=%llu",
				 (unsigned long long)info.nblocks *
					 info.block_size);
	if (!ret)
		ret = write_attr(dir, "control", "hw_block_size=%u",
				 info.block_size);
	if (!ret)
		ret = write_attr(dir, "control", "max_data_area_mb=%llu",
				 (unsigned long long)(fe->cfg.ring_size >> 20));
	if (!ret)
		ret = write_attr(
			dir, "control", "cmd_ring_size_mb=%llu",
			(unsigned long long)(fe->cfg.cmd_ring_size >> 20));
	lun_put(fe->tgt->luns, &info);
	if (ret)
		return ret;
	ret = write_attr(dir, "enable", "1");
	if (ret)
		return ret;
	/*
	 * Reservations: sdswarm's own (scsi/pr.c) rather than the kernel's,
	 * so they behave as over iSCSI. Refused by a kernel without the
	 * attribute; the kernel's emulation then answers, which still works.
	 */
	/*
	 * Task management on the ring (TMR entries): without it the kernel
	 * aborts a command held by a hang fault only when its own
	 * cmd_time_out (30 s) expires, not when the initiator asks.
	 */
	if (write_attr(dir, "attrib/tmr_notification", "1"))
		log_lun_debug(lun, "tcmu: tmr_notification: no TMR entries");
	if (write_attr(dir, "attrib/pgr_support", "1"))
		log_lun_debug(
			lun,
			"tcmu: pgr_support: the kernel emulates reservations");
	return 0;
}

static int dev_open(struct tcmu_fe *fe, struct tcmu_dev *d, const char *name)
{
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned int minor = 0;
	size_t size;
	void *map;
	int ret;

	ret = uio_find(fe, name, &minor);
	if (ret) {
		log_lun_err(d->lun, "tcmu: no uio device for %s: %s", name,
			    strerror(-ret));
		return ret;
	}
	fe->uio_hint = minor + 1;
	ret = uio_map_size(minor, &size);
	if (ret)
		return ret;
	d->fd = uio_open(minor);
	if (d->fd < 0) {
		ret = d->fd;
		d->fd = -1;
		log_lun_err(d->lun, "tcmu: /dev/uio%u: %s", minor,
			    strerror(-ret));
		return ret;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out_close;
	}
	ret = tcmu_ring_init(&d->ring, map, size);
	if (ret) {
		log_lun_err(d->lun, "tcmu: uio%u: %s", minor,
			    ret == -EPROTONOSUPPORT
				    ? "mailbox version is not 2"
				    : "ring does not fit its mapping");
		goto out_unmap;
	}
	ev.data.ptr = d;
	if (epoll_ctl(fe->epfd, EPOLL_CTL_ADD, d->fd, &ev) < 0) {
		ret = -errno;
		goto out_unmap;
	}
	log_lun_debug(
		d->lun,
		"tcmu: %s on uio%u: %zu bytes mapped, ring %u bytes, caps 0x%x",
		name, minor, size, d->ring.cmdr_size, d->ring.caps);
	return 0;

out_unmap:
	munmap(map, size);
	d->ring.base = NULL;
out_close:
	close(d->fd);
	d->fd = -1;
	return ret;
}

static int dev_create(struct tcmu_fe *fe, uint32_t lun, struct tcmu_dev **out)
{
	char dir[PATH_LEN], name[64];
	struct tcmu_dev *d;
	int ret;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	d->lun = lun;
	d->view = (struct scsi_view){.base = lun, .count = 1};
	dev_name(fe, lun, name, sizeof(name));
	dev_dir(fe, lun, dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0) {
		ret = -errno;
		log_lun_err(lun, "tcmu: mkdir %s: %m", dir);
		goto out_free;
	}
	ret = dev_configure(fe, lun, dir);
	if (ret) {
		log_lun_err(lun, "tcmu: configuring %s: %s", dir,
			    strerror(-ret));
		goto out_rmdir;
	}
	ret = dev_open(fe, d, name);
	if (ret)
		goto out_rmdir;
	*out = d;
	return 0;

out_rmdir:
	rmdir(dir);
out_free:
	free(d);
	return ret;
}

static void dev_destroy(struct tcmu_fe *fe, struct tcmu_dev *d)
{
	char dir[PATH_LEN];

	loop_detach(fe, d);
	munmap(d->ring.base, d->ring.size);
	close(d->fd);
	tcmu_dev_release(d);
	dev_dir(fe, d->lun, dir, sizeof(dir));
	/* the kernel frees the device once the last fd is closed: now */
	if (rmdir(dir) < 0)
		log_lun_warn(d->lun, "tcmu: rmdir %s: %m", dir);
	free(d);
}

/* ---- the tcm_loop fabric --------------------------------------------- */

static void lun_dir(const struct tcmu_fe *fe, uint32_t lun, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s/lun/lun_%u", fe->tpg_dir, lun);
}

static int fabric_link(struct tcmu_fe *fe, const struct tcmu_dev *d)
{
	char ldir[PATH_LEN], link[PATH_LEN + 64], dir[PATH_LEN], name[64];
	int ret;

	if (fe->cfg.fabric != CFG_TCMU_LOOPBACK)
		return 0;
	lun_dir(fe, d->lun, ldir, sizeof(ldir));
	dev_dir(fe, d->lun, dir, sizeof(dir));
	dev_name(fe, d->lun, name, sizeof(name));
	if (mkdir(ldir, 0755) < 0) {
		ret = -errno;
		log_lun_err(d->lun, "tcmu: mkdir %s: %m", ldir);
		return ret;
	}
	snprintf(link, sizeof(link), "%s/%s", ldir, name);
	/* tcm_loop adds the SCSI device here: the loop answers its INQUIRY */
	if (symlink(dir, link) < 0) {
		ret = -errno;
		log_lun_err(d->lun, "tcmu: link %s: %m", link);
		rmdir(ldir);
		return ret;
	}
	return 0;
}

static void fabric_unlink(struct tcmu_fe *fe, const struct tcmu_dev *d)
{
	char ldir[PATH_LEN], link[PATH_LEN + 64], name[64];

	if (fe->cfg.fabric != CFG_TCMU_LOOPBACK)
		return;
	lun_dir(fe, d->lun, ldir, sizeof(ldir));
	dev_name(fe, d->lun, name, sizeof(name));
	snprintf(link, sizeof(link), "%s/%s", ldir, name);
	/* the kernel removes the SCSI device (sd may flush it through us) */
	if (unlink(link) < 0 && errno != ENOENT)
		log_lun_warn(d->lun, "tcmu: unlink %s: %m", link);
	if (rmdir(ldir) < 0 && errno != ENOENT)
		log_lun_warn(d->lun, "tcmu: rmdir %s: %m", ldir);
}

/* WWNs from the target seed: "naa.5001405" (LIO's own prefix) + 9 hex. */
static void fabric_names(struct tcmu_fe *fe)
{
	uint64_t s = lun_seed(fe->tgt->luns);

	s ^= s >> 29;
	s *= 0xbf58476d1ce4e5b9ull;
	s ^= s >> 32;
	snprintf(fe->wwn, sizeof(fe->wwn), "naa.5001405%09llx",
		 (unsigned long long)(s & 0xfffffffffull));
	snprintf(fe->init_wwn, sizeof(fe->init_wwn), "naa.5001405%09llx",
		 (unsigned long long)((s + 1) & 0xfffffffffull));
	snprintf(fe->wwn_dir, sizeof(fe->wwn_dir), CFS_TARGET "/loopback/%s",
		 fe->wwn);
	snprintf(fe->tpg_dir, sizeof(fe->tpg_dir),
		 CFS_TARGET "/loopback/%s/tpgt_1", fe->wwn);
}

static int fabric_create(struct tcmu_fe *fe)
{
	char path[PATH_LEN];
	int ret;

	if (fe->cfg.fabric != CFG_TCMU_LOOPBACK)
		return 0;
	/* configfs loads tcm_loop on the first mkdir of "loopback" */
	snprintf(path, sizeof(path), CFS_TARGET "/loopback");
	ret = make_dir(path, NULL);
	if (ret && ret != -EEXIST)
		goto out_err;
	ret = make_dir(fe->wwn_dir, &fe->made_wwn);
	if (!ret)
		ret = make_dir(fe->tpg_dir, &fe->made_tpg);
	if (ret) {
		snprintf(path, sizeof(path), "%s", fe->tpg_dir);
		goto out_err;
	}
	ret = write_attr(fe->tpg_dir, "nexus", "%s", fe->init_wwn);
	if (ret) {
		snprintf(path, sizeof(path), "%s/nexus", fe->tpg_dir);
		goto out_err;
	}
	fe->made_nexus = true;
	fe->ctx.initiator = fe->init_wwn;
	return 0;

out_err:
	log_err("tcmu: %s: %s", path, strerror(-ret));
	return ret;
}

static void fabric_destroy(struct tcmu_fe *fe)
{
	if (fe->made_nexus && write_attr(fe->tpg_dir, "nexus", "NULL"))
		log_warn("tcmu: %s/nexus: could not drop the nexus",
			 fe->tpg_dir);
	fe->made_nexus = false;
	if (fe->made_tpg && rmdir(fe->tpg_dir) < 0)
		log_warn("tcmu: rmdir %s: %m", fe->tpg_dir);
	fe->made_tpg = false;
	if (fe->made_wwn && rmdir(fe->wwn_dir) < 0)
		log_warn("tcmu: rmdir %s: %m", fe->wwn_dir);
	fe->made_wwn = false;
}

/* ---- the exported set ------------------------------------------------ */

static int devs_insert(struct tcmu_fe *fe, unsigned int at, struct tcmu_dev *d)
{
	struct tcmu_dev **n;

	if (fe->ndevs == fe->cap) {
		unsigned int cap = fe->cap ? fe->cap * 2 : 64;

		n = realloc(fe->devs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		fe->devs = n;
		fe->cap = cap;
	}
	memmove(fe->devs + at + 1, fe->devs + at,
		(fe->ndevs - at) * sizeof(*fe->devs));
	fe->devs[at] = d;
	fe->ndevs++;
	return 0;
}

/* creates, serves and exports LUN @lun as entry @at of the array */
static int export_lun(struct tcmu_fe *fe, uint32_t lun, unsigned int at)
{
	struct tcmu_dev *d;
	int ret;

	ret = dev_create(fe, lun, &d);
	if (ret)
		return ret;
	ret = devs_insert(fe, at, d);
	if (ret) {
		dev_destroy(fe, d);
		return ret;
	}
	ret = fabric_link(fe, d);
	if (ret) {
		memmove(fe->devs + at, fe->devs + at + 1,
			(fe->ndevs - at - 1) * sizeof(*fe->devs));
		fe->ndevs--;
		dev_destroy(fe, d);
	}
	return ret;
}

static void unexport_at(struct tcmu_fe *fe, unsigned int at)
{
	struct tcmu_dev *d = fe->devs[at];

	fabric_unlink(fe, d);
	dev_destroy(fe, d);
	memmove(fe->devs + at, fe->devs + at + 1,
		(fe->ndevs - at - 1) * sizeof(*fe->devs));
	fe->ndevs--;
}

/*
 * Brings the exported set in line with the table: removed LUNs first, then
 * the new ones in LUN order. O(LUNs + exported) per change.
 */
static void sync_luns(struct tcmu_fe *fe)
{
	struct lun_table *t = fe->tgt->luns;
	uint32_t max = lun_max(t);
	unsigned int i;
	int l;

	for (i = fe->ndevs; i-- > 0;) {
		if (!lun_exists(t, fe->devs[i]->lun)) {
			log_lun_info(fe->devs[i]->lun, "tcmu: removed");
			unexport_at(fe, i);
		}
	}
	i = 0;
	lun_for_each(t, l, 0, max - 1) {
		while (i < fe->ndevs && fe->devs[i]->lun < (uint32_t)l)
			i++;
		if (i < fe->ndevs && fe->devs[i]->lun == (uint32_t)l)
			continue;
		if (export_lun(fe, (uint32_t)l, i) == 0)
			log_lun_info((uint32_t)l, "tcmu: added");
	}
}

static void *mgr_main(void *arg)
{
	struct tcmu_fe *fe = arg;
	struct pollfd p = {.fd = fe->mefd, .events = POLLIN};
	unsigned int gen;

	for (;;) {
		if (poll(&p, 1, MGR_POLL_MS) > 0)
			break; /* only stop writes the manager's eventfd */
		gen = lun_luns_generation(fe->tgt->luns);
		if (gen == fe->gen)
			continue;
		fe->gen = gen;
		sync_luns(fe);
	}
	return NULL;
}

/* ---- start and stop -------------------------------------------------- */

static void teardown(struct tcmu_fe *fe)
{
	unsigned int i;

	for (i = fe->ndevs; i-- > 0;)
		fabric_unlink(fe, fe->devs[i]);
	fabric_destroy(fe);
	for (i = fe->ndevs; i-- > 0;)
		dev_destroy(fe, fe->devs[i]);
	fe->ndevs = 0;
	/* an HBA holding someone else's backstores stays */
	if (fe->made_hba && rmdir(fe->hba_dir) < 0 && errno != EBUSY &&
	    errno != ENOTEMPTY)
		log_warn("tcmu: rmdir %s: %m", fe->hba_dir);
	fe->made_hba = false;
}

static void fe_free(struct tcmu_fe *fe)
{
	if (fe->loop_running) {
		pthread_mutex_lock(&fe->lock);
		fe->stop_loop = true;
		pthread_mutex_unlock(&fe->lock);
		loop_kick(fe);
		pthread_join(fe->loop, NULL);
	}
	target_unregister(fe->target, &fe->stats);
	if (fe->nlfd >= 0)
		close(fe->nlfd);
	if (fe->mefd >= 0)
		close(fe->mefd);
	if (fe->efd >= 0)
		close(fe->efd);
	if (fe->epfd >= 0)
		close(fe->epfd);
	pthread_cond_destroy(&fe->cond);
	pthread_mutex_destroy(&fe->lock);
	free(fe->ctx.iov);
	free(fe->devs);
	free(fe);
}

static int fe_alloc(const struct cfg_tcmu *tc, struct target *target,
		    struct tcmu_fe **out)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	struct tcmu_fe *fe;
	unsigned long id;
	int ret;

	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->target = target;
	fe->tgt = target->scsi;
	fe->cfg = *tc;
	fe->epfd = fe->efd = fe->mefd = fe->nlfd = -1;
	pthread_mutex_init(&fe->lock, NULL);
	pthread_cond_init(&fe->cond, NULL);
	id = strtoul(fe->cfg.hba + 5, NULL, 10);
	fe->hba_id = (uint32_t)id;
	snprintf(fe->hba_dir, sizeof(fe->hba_dir), CFS_TARGET "/core/%s",
		 fe->cfg.hba);
	fabric_names(fe);
	fe->ctx = (struct tcmu_serve_ctx){
		.tgt = fe->tgt, .stats = &fe->stats, .nexus = 1};
	fe->ctx.iov = calloc(TCMU_IOV_MAX, sizeof(*fe->ctx.iov));
	fe->epfd = epoll_create1(EPOLL_CLOEXEC);
	fe->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fe->mefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!fe->ctx.iov || fe->epfd < 0 || fe->efd < 0 || fe->mefd < 0)
		goto out_free;
	if (epoll_ctl(fe->epfd, EPOLL_CTL_ADD, fe->efd, &ev) < 0)
		goto out_free;
	/* the events are information only: serving works without them */
	ret = tcmu_nl_open(&fe->nlfd, &fe->nl_family);
	if (ret) {
		log_info("tcmu: TCM-USER netlink events unavailable: %s",
			 strerror(-ret));
		fe->nlfd = -1;
	} else {
		ev.data.ptr = &fe->nl_tag;
		if (epoll_ctl(fe->epfd, EPOLL_CTL_ADD, fe->nlfd, &ev) < 0)
			goto out_free;
	}
	*out = fe;
	return 0;

out_free:
	fe_free(fe);
	return -ENOMEM;
}

int tcmu_fe_start(const struct cfg_tcmu *tc, struct target *target,
		  void **state)
{
	struct lun_table *t = target->luns;
	uint32_t max = lun_max(t);
	struct tcmu_fe *fe;
	uint64_t t0 = now_ns();
	int l, ret;

	if (!tc->enabled)
		return 1;
	if (access(CFS_TARGET "/core", F_OK) < 0) {
		log_err("tcmu: no %s: load target_core_user and mount configfs",
			CFS_TARGET "/core");
		return -ENOENT;
	}
	ret = fe_alloc(tc, target, &fe);
	if (ret)
		return ret;
	ret = target_register(target,
			      &(struct target_source){.kind = TARGET_SRC_SCSI,
						      .obj = &fe->stats});
	if (ret)
		goto out_free;
	ret = pthread_create(&fe->loop, NULL, loop_main, fe);
	if (ret) {
		ret = -ret;
		goto out_free;
	}
	fe->loop_running = true;
	ret = make_dir(fe->hba_dir, &fe->made_hba);
	if (ret) {
		log_err("tcmu: mkdir %s: %s", fe->hba_dir, strerror(-ret));
		goto out_teardown;
	}
	ret = fabric_create(fe);
	if (ret)
		goto out_teardown;
	fe->gen = lun_luns_generation(t);
	lun_for_each(t, l, 0, max - 1) {
		ret = export_lun(fe, (uint32_t)l, fe->ndevs);
		if (ret)
			goto out_teardown;
	}
	ret = pthread_create(&fe->mgr, NULL, mgr_main, fe);
	if (ret) {
		ret = -ret;
		goto out_teardown;
	}
	fe->mgr_running = true;
	log_notice(
		"tcmu: %u backstore(s) on %s%s%s in %.1f ms; each a %llu MiB command ring and up to %llu MiB of data area; netlink events %s",
		fe->ndevs, fe->hba_dir,
		fe->cfg.fabric == CFG_TCMU_LOOPBACK ? ", exported through "
						    : "",
		fe->cfg.fabric == CFG_TCMU_LOOPBACK ? fe->wwn : "",
		(double)(now_ns() - t0) / 1e6,
		(unsigned long long)(fe->cfg.cmd_ring_size >> 20),
		(unsigned long long)(fe->cfg.ring_size >> 20),
		fe->nlfd >= 0 ? "joined" : "unavailable");
	*state = fe;
	return 0;

out_teardown:
	teardown(fe);
out_free:
	fe_free(fe);
	return ret;
}

void tcmu_fe_stop(void *state)
{
	struct tcmu_fe *fe = state;
	uint64_t one = 1;

	if (!fe)
		return;
	if (fe->mgr_running) {
		if (write(fe->mefd, &one, sizeof(one)) < 0)
			log_debug("tcmu: eventfd: %m");
		pthread_join(fe->mgr, NULL);
		fe->mgr_running = false;
	}
	teardown(fe);
	fe_free(fe);
}
