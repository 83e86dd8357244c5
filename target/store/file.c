// SPDX-License-Identifier: MIT
/*
 * The persistent file store (--store DIR).
 *
 * Layout of DIR, the whole on-disk format:
 *
 *   DIR/.lock             empty; flock(LOCK_EX)ed while a store uses DIR, so
 *                         two daemons never share one directory
 *   DIR/lun-NNNNNNN.img   one sparse file per LUN that has been written;
 *                         NNNNNNN is the LUN number in 7 decimal digits
 *                         (lun-0000123.img is LUN 123)
 *
 * A file's byte offsets are the LUN's byte offsets. Holes (never written, or
 * punched by unmap) are the unmapped ranges and read as zeros, as does
 * everything past the end of a file and all of a LUN that has no file. A
 * file's size is the end of its highest write, not the LUN's capacity, which
 * the store does not know. There is no other metadata: a directory of raw
 * sparse images made elsewhere is a valid store, and other names are ignored.
 *
 * Files are created when a LUN is first written, never for reads. An LRU
 * cache holds at most max_open_files descriptors; a call that finds every
 * descriptor in use waits for one. A write marks its LUN dirty; the LUN stays
 * known as dirty after its descriptor is evicted, and store_flush()
 * fdatasyncs exactly the dirty LUNs, reopening closed ones (Linux >= 4.16
 * reports a writeback error to the first fsync even on a descriptor opened
 * after the error). FUA writes use pwritev2(RWF_DSYNC). Creating or
 * unlinking a file also makes the directory dirty, and it is fsynced by the
 * next flush or FUA write, so acknowledged data is reachable after a crash.
 *
 * One mutex protects the cache, the dirty marks and the existence bitmap; it
 * is never held across pread/pwrite/fdatasync, only across open and close.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "store_i.h"

#define FILE_NAME_MAX 32
#define FILE_NAME_LEN 15 /* "lun-" + 7 digits + ".img" */
#define FILE_BUCKETS_MIN_BITS 6
/* Which LUNs have a file: a bitmap in pages of 4096 LUNs (512 bytes). */
#define FILE_BIT_PAGE_SHIFT 12
#define FILE_BITS_PER_PAGE (1u << FILE_BIT_PAGE_SHIFT)
#define FILE_BIT_PAGES (STORE_MAX_LUNS / FILE_BITS_PER_PAGE)

/*
 * A LUN the store is tracking: open (@fd >= 0), or closed but dirty or
 * failed. An entry that is open, unreferenced and idle is on the LRU list.
 */
struct file_ent {
	uint32_t lun;
	int fd;
	unsigned int refs;
	unsigned int syncing; /* fdatasyncs in progress */
	bool dirty; /* written since the last fdatasync */
	bool failed; /* an fdatasync failed: flushes keep failing */
	struct file_ent *hnext;
	struct file_ent *lru_prev;
	struct file_ent *lru_next;
};

struct file_store {
	struct store base;
	int dirfd;
	int lockfd;
	unsigned int max_open;
	mode_t file_mode; /* of the files the store creates */
	pthread_mutex_t lock;
	/* Broadcast when an entry's last reference goes: a slot for a waiter
	 * in file_get(), or the end of calls store_drop_lun() waits out. */
	pthread_cond_t idle;
	/* All below under @lock. */
	struct file_ent **buckets;
	unsigned int bucket_bits;
	size_t nents;
	struct file_ent lru; /* sentinel: lru.lru_next is the coldest */
	unsigned int nopen;
	bool dir_dirty;
	unsigned int dir_syncing;
	uint64_t evictions;
	uint64_t *exists[FILE_BIT_PAGES];
	size_t exists_pages;
	/* Statistics only: relaxed. */
	_Atomic uint64_t reads;
	_Atomic uint64_t writes;
	_Atomic uint64_t flushes;
	_Atomic uint64_t syncs;
	_Atomic uint64_t unmapped;
	_Atomic uint64_t limit_hits;
	_Atomic uint64_t io_errors;
};

static struct file_store *file_of(struct store *s)
{
	return (struct file_store *)s;
}

static void file_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void file_name(char *buf, uint32_t lun)
{
	snprintf(buf, FILE_NAME_MAX, "lun-%07" PRIu32 ".img", lun);
}

/* The LUN of a file name, or -1 for a name that is not a LUN file. */
static int64_t file_parse_name(const char *name)
{
	uint32_t v = 0;
	int i;

	if (strlen(name) != FILE_NAME_LEN || memcmp(name, "lun-", 4) ||
	    memcmp(name + 11, ".img", 4))
		return -1;
	for (i = 4; i < 11; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		v = v * 10 + (uint32_t)(name[i] - '0');
	}
	return v < STORE_MAX_LUNS ? (int64_t)v : -1;
}

/*
 * Map a failed call's -errno to the store's: a full file system is the
 * same outcome as a full mem store; what the caller can act on passes
 * through; anything else is an I/O error.
 */
static int file_err(struct file_store *f, int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		file_count(&f->limit_hits, 1);
		return -ENOSPC;
	case -EFBIG:
	case -ENOMEM:
	case -EINVAL:
	case -EMFILE:
		return err;
	default:
		file_count(&f->io_errors, 1);
		return -EIO;
	}
}

/* ---- which LUNs have a file (under f->lock) ----------------------------- */

static bool file_exists(const struct file_store *f, uint32_t lun)
{
	const uint64_t *page = f->exists[lun >> FILE_BIT_PAGE_SHIFT];
	uint32_t bit = lun & (FILE_BITS_PER_PAGE - 1);

	return page && (page[bit / 64] >> (bit % 64) & 1);
}

/* Make sure @lun's bitmap page exists, so marking it cannot fail later. */
static int file_exists_prepare(struct file_store *f, uint32_t lun)
{
	uint64_t **page = &f->exists[lun >> FILE_BIT_PAGE_SHIFT];

	if (*page)
		return 0;
	*page = calloc(FILE_BITS_PER_PAGE / 64, sizeof(uint64_t));
	if (!*page)
		return -ENOMEM;
	f->exists_pages++;
	return 0;
}

static void file_exists_set(struct file_store *f, uint32_t lun, bool on)
{
	uint64_t *page = f->exists[lun >> FILE_BIT_PAGE_SHIFT];
	uint32_t bit = lun & (FILE_BITS_PER_PAGE - 1);

	if (!page)
		return;
	if (on)
		page[bit / 64] |= 1ULL << (bit % 64);
	else
		page[bit / 64] &= ~(1ULL << (bit % 64));
}

/* ---- the entry table and LRU (under f->lock) ---------------------------- */

static size_t file_bucket(const struct file_store *f, uint32_t lun)
{
	return (size_t)(((uint64_t)lun * 0x9e3779b97f4a7c15ULL) >>
			(64 - f->bucket_bits));
}

static struct file_ent *file_find(const struct file_store *f, uint32_t lun)
{
	struct file_ent *e;

	for (e = f->buckets[file_bucket(f, lun)]; e; e = e->hnext)
		if (e->lun == lun)
			return e;
	return NULL;
}

/* Doubling at one entry per bucket; without memory, chains just grow. */
static void file_hash_grow(struct file_store *f)
{
	unsigned int obits = f->bucket_bits;
	struct file_ent **old = f->buckets, **nb, *e, *next;
	size_t i;

	nb = calloc((size_t)1 << (obits + 1), sizeof(*nb));
	if (!nb)
		return;
	f->buckets = nb;
	f->bucket_bits = obits + 1;
	for (i = 0; i < (size_t)1 << obits; i++) {
		for (e = old[i]; e; e = next) {
			size_t b = file_bucket(f, e->lun);

			next = e->hnext;
			e->hnext = nb[b];
			nb[b] = e;
		}
	}
	free(old);
}

static void file_hash_add(struct file_store *f, struct file_ent *e)
{
	size_t b;

	if (f->nents >= (size_t)1 << f->bucket_bits)
		file_hash_grow(f);
	b = file_bucket(f, e->lun);
	e->hnext = f->buckets[b];
	f->buckets[b] = e;
	f->nents++;
}

static void file_hash_del(struct file_store *f, struct file_ent *e)
{
	struct file_ent **pp = &f->buckets[file_bucket(f, e->lun)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	f->nents--;
}

static void file_lru_del(struct file_ent *e)
{
	e->lru_prev->lru_next = e->lru_next;
	e->lru_next->lru_prev = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void file_lru_add(struct file_store *f, struct file_ent *e)
{
	e->lru_prev = f->lru.lru_prev;
	e->lru_next = &f->lru;
	f->lru.lru_prev->lru_next = e;
	f->lru.lru_prev = e;
}

/* Close the coldest idle descriptor; false if every open one is in use. */
static bool file_evict(struct file_store *f)
{
	struct file_ent *e = f->lru.lru_next;

	if (e == &f->lru)
		return false;
	file_lru_del(e);
	/* A regular file's close cannot fail in a way that loses data we
	 * still track: a dirty entry stays and is fdatasynced by a flush. */
	close(e->fd);
	e->fd = -1;
	f->nopen--;
	f->evictions++;
	if (!e->dirty && !e->failed) {
		file_hash_del(f, e);
		free(e);
	}
	return true;
}

/*
 * A referenced entry with an open descriptor for @lun in *@out, opening the
 * file (creating it if @create) when it is not open. Waits while every
 * descriptor is in use. Return: 0; 1 when the LUN has no file and !@create
 * (*@out untouched); -ENOMEM, -ENOSPC, -EIO.
 */
static int file_get(struct file_store *f, uint32_t lun, bool create,
		    struct file_ent **out)
{
	char name[FILE_NAME_MAX];
	struct file_ent *e;
	bool existed, fresh = false;
	int fd, ret = 0;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		e = file_find(f, lun);
		if (e && e->fd >= 0) {
			if (e->refs++ == 0)
				file_lru_del(e);
			goto out_unlock;
		}
		existed = file_exists(f, lun);
		if (!existed && !create) {
			ret = 1;
			goto out_unlock;
		}
		if (f->nopen < f->max_open)
			break;
		if (!file_evict(f))
			pthread_cond_wait(&f->idle, &f->lock);
	}
	if (!existed) {
		ret = file_exists_prepare(f, lun);
		if (ret < 0)
			goto out_unlock;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		e->lun = lun;
		e->fd = -1;
		file_hash_add(f, e);
		fresh = true;
	}
	file_name(name, lun);
	for (;;) {
		fd = openat(f->dirfd, name,
			    O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0),
			    f->file_mode);
		/*
		 * The process is out of descriptors (a connection flood):
		 * give up an idle cached one rather than fail the command.
		 * With none idle, the caller gets -EMFILE, which is no
		 * medium error but a "try again" (SCSI BUSY).
		 */
		if (fd >= 0 || (errno != EMFILE && errno != ENFILE) ||
		    !file_evict(f))
			break;
	}
	if (fd < 0) {
		ret = errno == ENFILE ? -EMFILE : -errno;
		goto out_drop_ent;
	}
	e->fd = fd;
	e->refs = 1;
	f->nopen++;
	if (!existed) {
		file_exists_set(f, lun, true);
		f->dir_dirty = true;
	}
	goto out_unlock;

out_drop_ent:
	if (fresh) {
		file_hash_del(f, e);
		free(e);
	}
	if (ret == -ENOENT && !create) {
		/* Removed behind our back: the LUN reads as zeros again. */
		file_exists_set(f, lun, false);
		ret = 1;
	} else {
		ret = file_err(f, ret);
	}
out_unlock:
	pthread_mutex_unlock(&f->lock);
	if (ret == 0)
		*out = e;
	return ret;
}

/* Drop a reference from file_get(); @dirty: the file now has data that
 * only an fdatasync makes durable. */
static void file_put(struct file_store *f, struct file_ent *e, bool dirty)
{
	pthread_mutex_lock(&f->lock);
	if (dirty)
		e->dirty = true;
	if (--e->refs == 0) {
		file_lru_add(f, e);
		pthread_cond_broadcast(&f->idle);
	}
	pthread_mutex_unlock(&f->lock);
}

/* ---- I/O helpers --------------------------------------------------------- */

static int file_pread_all(int fd, unsigned char *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			/* Past the end of the file: a hole. */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int file_pwrite_all(int fd, const unsigned char *p, size_t len,
			   uint64_t off, int rwflags)
{
	while (len) {
		struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
		ssize_t n;

		if (rwflags)
			n = pwritev2(fd, &iov, 1, (off_t)off, rwflags);
		else
			n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* The last resort for zeroing: write zeroes up to the end of the file (the
 * rest reads as zero already). O(len) writes of 64 KiB. */
static int file_zero_bytes(int fd, uint64_t off, uint64_t len)
{
	static const unsigned char zeros[65536];
	struct stat st;
	int ret;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (off >= (uint64_t)st.st_size)
		return 0;
	if (len > (uint64_t)st.st_size - off)
		len = (uint64_t)st.st_size - off;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		ret = file_pwrite_all(fd, zeros, n, off, 0);
		if (ret < 0)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

static int file_fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
	while (fallocate(fd, mode, (off_t)off, (off_t)len) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Make [off, off + len) read as zero: a hole if @punch, else zeroed blocks
 * that stay allocated, each falling back to what the file system has. */
static int file_zero_fd(int fd, uint64_t off, uint64_t len, bool punch)
{
	int ret;

	if (!punch) {
		ret = file_fallocate(fd,
				     FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				     off, len);
		if (ret != -EOPNOTSUPP)
			return ret;
	}
	ret = file_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     off, len);
	if (ret != -EOPNOTSUPP)
		return ret;
	return file_zero_bytes(fd, off, len);
}

/*
 * fsync the directory if files were created or unlinked. A caller that finds
 * another thread's sync in progress syncs too rather than return before that
 * sync has finished.
 */
static int file_sync_dir(struct file_store *f)
{
	bool need;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	need = f->dir_dirty || f->dir_syncing;
	f->dir_dirty = false;
	if (need)
		f->dir_syncing++;
	pthread_mutex_unlock(&f->lock);
	if (!need)
		return 0;
	file_count(&f->syncs, 1);
	if (fsync(f->dirfd) < 0)
		ret = -errno;
	pthread_mutex_lock(&f->lock);
	f->dir_syncing--;
	if (ret < 0)
		f->dir_dirty = true;
	pthread_mutex_unlock(&f->lock);
	return ret < 0 ? file_err(f, ret) : 0;
}

/* fdatasync one LUN if it has writes since its last sync (or one is being
 * synced by another thread right now, which this call must not overtake). */
static int file_flush_lun(struct file_store *f, uint32_t lun)
{
	struct file_ent *e;
	bool need, failed;
	int ret;

	pthread_mutex_lock(&f->lock);
	e = file_find(f, lun);
	need = e && (e->dirty || e->syncing);
	failed = e && e->failed;
	pthread_mutex_unlock(&f->lock);
	if (failed) {
		file_count(&f->io_errors, 1);
		return -EIO;
	}
	if (!need)
		return 0;

	ret = file_get(f, lun, false, &e);
	if (ret == 1)
		return 0; /* dropped meanwhile */
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&f->lock);
	need = e->dirty || e->syncing;
	e->dirty = false;
	e->syncing++;
	pthread_mutex_unlock(&f->lock);
	ret = 0;
	if (need) {
		file_count(&f->syncs, 1);
		if (fdatasync(e->fd) < 0)
			ret = -errno;
	}
	pthread_mutex_lock(&f->lock);
	e->syncing--;
	/* The kernel may have dropped the pages it could not write: once
	 * failed, always failed, or a retry would report a false success. */
	if (ret < 0)
		e->failed = true;
	pthread_mutex_unlock(&f->lock);
	file_put(f, e, false);
	if (ret < 0) {
		file_count(&f->io_errors, 1);
		return -EIO;
	}
	return 0;
}

/* ---- operations ---------------------------------------------------------- */

static int file_read(struct store *s, uint32_t lun, uint64_t off, void *buf,
		     size_t len)
{
	struct file_store *f = file_of(s);
	struct file_ent *e;
	int ret;

	ret = file_get(f, lun, false, &e);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		memset(buf, 0, len);
	} else {
		ret = file_pread_all(e->fd, buf, len, off);
		file_put(f, e, false);
		if (ret < 0)
			return file_err(f, ret);
	}
	file_count(&f->reads, 1);
	return 0;
}

static int file_write(struct store *s, uint32_t lun, uint64_t off,
		      const void *buf, size_t len, unsigned int flags)
{
	struct file_store *f = file_of(s);
	bool fua = flags & STORE_FUA;
	struct file_ent *e;
	int ret;

	ret = file_get(f, lun, true, &e);
	if (ret < 0)
		return ret;
	if (fua) {
		file_count(&f->syncs, 1);
		ret = file_pwrite_all(e->fd, buf, len, off, RWF_DSYNC);
		if (ret == -EOPNOTSUPP || ret == -ENOSYS) {
			/* A kernel or file system without RWF_DSYNC. */
			ret = file_pwrite_all(e->fd, buf, len, off, 0);
			if (!ret && fdatasync(e->fd) < 0)
				ret = -errno;
		}
	} else {
		ret = file_pwrite_all(e->fd, buf, len, off, 0);
	}
	if (fua && ret < 0 && ret != -ENOSPC && ret != -EDQUOT &&
	    ret != -EFBIG) {
		/* A failed synchronous write may have consumed the error
		 * report of earlier writeback: later flushes must fail. */
		pthread_mutex_lock(&f->lock);
		e->failed = true;
		pthread_mutex_unlock(&f->lock);
	}
	/* Even a failed write may have left pages to sync. */
	file_put(f, e, !fua || ret < 0);
	if (ret < 0)
		return file_err(f, ret);
	if (fua) {
		/* A new file's directory entry must be durable too. */
		ret = file_sync_dir(f);
		if (ret < 0)
			return ret;
	}
	file_count(&f->writes, 1);
	return 0;
}

static int file_zero(struct file_store *f, uint32_t lun, uint64_t off,
		     uint64_t len, bool punch)
{
	struct file_ent *e;
	int ret;

	ret = file_get(f, lun, false, &e);
	if (ret == 1)
		return 0; /* no file: all of it reads as zero already */
	if (ret < 0)
		return ret;
	ret = file_zero_fd(e->fd, off, len, punch);
	file_put(f, e, true);
	if (ret < 0)
		return file_err(f, ret);
	if (punch)
		file_count(&f->unmapped, len);
	return 0;
}

static int file_write_zeroes(struct store *s, uint32_t lun, uint64_t off,
			     uint64_t len, unsigned int flags)
{
	struct file_store *f = file_of(s);
	int ret;

	ret = file_zero(f, lun, off, len, flags & STORE_UNMAP);
	if (ret == 0 && (flags & STORE_FUA))
		ret = file_flush_lun(f, lun);
	return ret;
}

static int file_unmap(struct store *s, uint32_t lun, uint64_t off, uint64_t len)
{
	return file_zero(file_of(s), lun, off, len, true);
}

static int file_flush(struct store *s, uint32_t lun)
{
	struct file_store *f = file_of(s);
	uint32_t *luns = NULL;
	size_t n = 0, i, b;
	struct file_ent *e;
	int ret = 0, r;

	file_count(&f->flushes, 1);
	if (lun != STORE_ALL_LUNS) {
		ret = file_flush_lun(f, lun);
		r = file_sync_dir(f);
		return ret < 0 ? ret : r;
	}

	/* Note the LUNs to sync, then sync each without the lock. */
	pthread_mutex_lock(&f->lock);
	for (b = 0; b < (size_t)1 << f->bucket_bits; b++)
		for (e = f->buckets[b]; e; e = e->hnext)
			n += e->dirty || e->syncing || e->failed;
	if (n) {
		luns = malloc(n * sizeof(*luns));
		if (!luns) {
			pthread_mutex_unlock(&f->lock);
			return -ENOMEM;
		}
		n = 0;
		for (b = 0; b < (size_t)1 << f->bucket_bits; b++)
			for (e = f->buckets[b]; e; e = e->hnext)
				if (e->dirty || e->syncing || e->failed)
					luns[n++] = e->lun;
	}
	pthread_mutex_unlock(&f->lock);

	for (i = 0; i < n; i++) {
		r = file_flush_lun(f, luns[i]);
		if (r < 0 && !ret)
			ret = r;
	}
	free(luns);
	r = file_sync_dir(f);
	return ret < 0 ? ret : r;
}

static int file_mapped(struct store *s, uint32_t lun, uint64_t off,
		       uint64_t limit, uint64_t *len_out)
{
	struct file_store *f = file_of(s);
	struct file_ent *e;
	uint64_t run = limit;
	off_t d, h;
	int ret;

	ret = file_get(f, lun, false, &e);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		*len_out = limit;
		return 0;
	}
	/* lseek moves the shared file offset, which nothing here uses:
	 * every transfer is pread/pwrite. */
	ret = 0;
	d = lseek(e->fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno != ENXIO)
			ret = -errno;
	} else if ((uint64_t)d > off) {
		run = (uint64_t)d - off;
	} else {
		h = lseek(e->fd, (off_t)off, SEEK_HOLE);
		if (h < 0)
			ret = -errno;
		else
			run = (uint64_t)h - off;
		if (ret == 0)
			ret = 1;
	}
	file_put(f, e, false);
	if (ret < 0)
		return file_err(f, ret);
	*len_out = run < limit ? run : limit;
	return ret;
}

static int file_drop_lun(struct store *s, uint32_t lun)
{
	struct file_store *f = file_of(s);
	char name[FILE_NAME_MAX];
	struct file_ent *e;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	/* Let calls still in flight on this LUN finish with the descriptor. */
	while ((e = file_find(f, lun)) && e->refs)
		pthread_cond_wait(&f->idle, &f->lock);
	if (e) {
		if (e->fd >= 0) {
			file_lru_del(e);
			close(e->fd);
			f->nopen--;
		}
		file_hash_del(f, e);
		free(e);
	}
	file_name(name, lun);
	if (unlinkat(f->dirfd, name, 0) < 0) {
		if (errno != ENOENT)
			ret = -errno;
	} else {
		f->dir_dirty = true;
	}
	if (ret == 0)
		file_exists_set(f, lun, false);
	pthread_mutex_unlock(&f->lock);
	return ret < 0 ? file_err(f, ret) : 0;
}

static uint64_t file_lun_bytes(struct store *s, uint32_t lun)
{
	struct file_store *f = file_of(s);
	char name[FILE_NAME_MAX];
	struct stat st;
	bool exists;

	pthread_mutex_lock(&f->lock);
	exists = file_exists(f, lun);
	pthread_mutex_unlock(&f->lock);
	if (!exists)
		return 0;
	file_name(name, lun);
	if (fstatat(f->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return (uint64_t)st.st_blocks * 512;
}

/* Read DIR on a descriptor of its own: @fn(f, lun, name) per LUN file. */
static int file_scan_dir(struct file_store *f,
			 int (*fn)(struct file_store *f, uint32_t lun,
				   const char *name, void *arg),
			 void *arg)
{
	struct dirent *d;
	DIR *dir;
	int fd, ret = 0;

	fd = openat(f->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((d = readdir(dir))) {
		int64_t lun;

		if (d->d_type != DT_REG && d->d_type != DT_UNKNOWN)
			continue;
		lun = file_parse_name(d->d_name);
		if (lun < 0)
			continue;
		ret = fn(f, (uint32_t)lun, d->d_name, arg);
		if (ret < 0)
			break;
	}
	closedir(dir);
	return ret;
}

static int file_stat_one(struct file_store *f, uint32_t lun, const char *name,
			 void *arg)
{
	struct store_stats *st = arg;
	struct stat sb;

	(void)lun;
	if (fstatat(f->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(sb.st_mode))
		return 0;
	st->chunks++;
	st->data_bytes += (uint64_t)sb.st_blocks * 512;
	st->luns += sb.st_blocks != 0;
	return 0;
}

static void file_get_stats(struct store *s, struct store_stats *st)
{
	struct file_store *f = file_of(s);

	pthread_mutex_lock(&f->lock);
	st->open_files = f->nopen;
	st->fd_evictions = f->evictions;
	st->meta_bytes = sizeof(*f) +
			 ((size_t)1 << f->bucket_bits) * sizeof(*f->buckets) +
			 f->nents * sizeof(struct file_ent) +
			 f->exists_pages * (FILE_BITS_PER_PAGE / 8);
	pthread_mutex_unlock(&f->lock);
	st->reads = atomic_load_explicit(&f->reads, memory_order_relaxed);
	st->writes = atomic_load_explicit(&f->writes, memory_order_relaxed);
	st->flushes = atomic_load_explicit(&f->flushes, memory_order_relaxed);
	st->syncs = atomic_load_explicit(&f->syncs, memory_order_relaxed);
	st->unmapped_bytes =
		atomic_load_explicit(&f->unmapped, memory_order_relaxed);
	st->limit_hits =
		atomic_load_explicit(&f->limit_hits, memory_order_relaxed);
	st->io_errors =
		atomic_load_explicit(&f->io_errors, memory_order_relaxed);
	file_scan_dir(f, file_stat_one, st);
}

static void file_free_all(struct file_store *f)
{
	struct file_ent *e, *next;
	size_t b;

	for (b = 0; b < (size_t)1 << f->bucket_bits; b++) {
		for (e = f->buckets[b]; e; e = next) {
			next = e->hnext;
			if (e->fd >= 0)
				close(e->fd);
			free(e);
		}
	}
	free(f->buckets);
	for (b = 0; b < FILE_BIT_PAGES; b++)
		free(f->exists[b]);
}

static void file_destroy(struct store *s)
{
	struct file_store *f = file_of(s);

	/* Errors cannot be reported from here: callers who care flush first. */
	file_flush(s, STORE_ALL_LUNS);
	file_free_all(f);
	pthread_cond_destroy(&f->idle);
	pthread_mutex_destroy(&f->lock);
	close(f->lockfd);
	close(f->dirfd);
	free(f);
}

static const struct store_ops file_ops = {
	.kind = "file",
	.destroy = file_destroy,
	.read = file_read,
	.write = file_write,
	.write_zeroes = file_write_zeroes,
	.unmap = file_unmap,
	.flush = file_flush,
	.mapped = file_mapped,
	.drop_lun = file_drop_lun,
	.get_stats = file_get_stats,
	.lun_bytes = file_lun_bytes,
};

static int file_note_existing(struct file_store *f, uint32_t lun,
			      const char *name, void *arg)
{
	int ret;

	(void)name;
	(void)arg;
	ret = file_exists_prepare(f, lun);
	if (ret < 0)
		return ret;
	file_exists_set(f, lun, true);
	return 0;
}

int store_file_create(struct store **out, const struct store_file_params *p)
{
	struct file_store *f;
	mode_t dir_mode;
	struct stat st;
	size_t i;
	int ret;

	if (!out || !p || !p->dir || !*p->dir || (p->file_mode & ~0666u))
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->base.ops = &file_ops;
	f->max_open =
		p->max_open_files ? p->max_open_files : STORE_FILE_DEFAULT_OPEN;
	f->file_mode = p->file_mode ? p->file_mode : STORE_FILE_DEFAULT_MODE;
	/* the directory: x wherever r is, so the bits that may read can */
	dir_mode = f->file_mode | (f->file_mode & 0444) >> 2;
	f->lru.lru_next = f->lru.lru_prev = &f->lru;
	f->bucket_bits = FILE_BUCKETS_MIN_BITS;
	f->buckets = calloc((size_t)1 << f->bucket_bits, sizeof(*f->buckets));
	if (!f->buckets) {
		ret = -ENOMEM;
		goto out_free;
	}

	if (mkdir(p->dir, dir_mode) < 0 && errno != EEXIST) {
		ret = -errno;
		goto out_free;
	}
	f->dirfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		ret = -errno;
		goto out_free;
	}
	f->lockfd = openat(f->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC,
			   f->file_mode);
	if (f->lockfd < 0) {
		ret = -errno;
		goto out_close_dir;
	}
	if (flock(f->lockfd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto out_close_lock;
	}
	if (fstat(f->dirfd, &st) < 0) {
		ret = -errno;
		goto out_close_lock;
	}
	/* Holes and punches work in file system blocks. */
	f->base.granularity = 4096;
	if (st.st_blksize >= 512 && !(st.st_blksize & (st.st_blksize - 1)))
		f->base.granularity = (uint32_t)st.st_blksize;

	ret = file_scan_dir(f, file_note_existing, NULL);
	if (ret < 0)
		goto out_free_pages;
	ret = -pthread_mutex_init(&f->lock, NULL);
	if (ret)
		goto out_free_pages;
	ret = -pthread_cond_init(&f->idle, NULL);
	if (ret)
		goto out_destroy_lock;
	*out = &f->base;
	return 0;

out_destroy_lock:
	pthread_mutex_destroy(&f->lock);
out_free_pages:
	for (i = 0; i < FILE_BIT_PAGES; i++)
		free(f->exists[i]);
out_close_lock:
	close(f->lockfd);
out_close_dir:
	close(f->dirfd);
out_free:
	free(f->buckets);
	free(f);
	return ret;
}
