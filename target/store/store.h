/* SPDX-License-Identifier: MIT */
/*
 * store: where blocks live. One instance serves every LUN, addressed by LUN
 * number and byte offset; a LUN costs nothing here until it is first written.
 * Two back ends: mem (sparse, in memory, the default) and file (persistent).
 */
#ifndef SDSWARM_STORE_H
#define SDSWARM_STORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* store_write(), store_write_zeroes(): durable before the call returns. */
#define STORE_FUA (1u << 0)
/* store_write_zeroes(): the range may be deallocated instead of written. */
#define STORE_UNMAP (1u << 1)
/* store_flush(): every LUN. */
#define STORE_ALL_LUNS UINT32_MAX
/* LUN numbers are 0..STORE_MAX_LUNS-1 inclusive (20 bits; sdswarm uses 18). */
#define STORE_MAX_LUNS (1u << 20)
/* Each LUN is a byte address space 0..STORE_MAX_BYTES-1 inclusive (8 PiB). */
#define STORE_MAX_BYTES (1ULL << 53)

/* mem store chunk sizes: a power of two in this range, inclusive. */
#define STORE_MEM_MIN_CHUNK 512u
#define STORE_MEM_MAX_CHUNK (1u << 20)
#define STORE_MEM_DEFAULT_CHUNK 4096u
#define STORE_MEM_DEFAULT_SHARDS 64u
#define STORE_MEM_MAX_SHARDS 4096u
#define STORE_FILE_DEFAULT_OPEN 256u
/* LUN files' mode: the owner's only, since they hold the disks' data. */
#define STORE_FILE_DEFAULT_MODE 0600u

struct store;

/**
 * struct store_mem_params - how to build a mem store; all-zero means defaults.
 * @chunk_size: allocation unit in bytes, a power of two from
 *	STORE_MEM_MIN_CHUNK to STORE_MEM_MAX_CHUNK inclusive; 0 means
 *	STORE_MEM_DEFAULT_CHUNK. Metadata stays under 2% of data at 4096.
 * @mem_limit: most bytes of chunk data the store may hold (rounded down to
 *	whole chunks); 0 means unlimited. Writes that need more fail -ENOSPC.
 * @shards: number of independently locked shards, a power of two from 1 to
 *	STORE_MEM_MAX_SHARDS inclusive; 0 means STORE_MEM_DEFAULT_SHARDS.
 */
struct store_mem_params {
	size_t chunk_size;
	uint64_t mem_limit;
	unsigned int shards;
};

/**
 * struct store_file_params - how to build a file store.
 * @dir: directory holding one sparse file per written LUN; created if
 *	missing. Only one store may use a directory at a time.
 * @max_open_files: most LUN files held open at once (an LRU cache); 0 means
 *	STORE_FILE_DEFAULT_OPEN. When the process runs out of descriptors
 *	below this, a LUN file is opened by closing an idle cached one; with
 *	none idle, any call that must open a file fails -EMFILE (nothing was
 *	done: try again later).
 * @file_mode: permission bits of the LUN files and the lock file the store
 *	creates, read and write bits only (a subset of 0666); 0 means
 *	STORE_FILE_DEFAULT_MODE. A directory the store creates gets the same
 *	bits plus search (x) wherever read is given: 0600 makes it 0700. The
 *	umask applies as usual; existing files and directories are left as
 *	they are.
 */
struct store_file_params {
	const char *dir;
	unsigned int max_open_files;
	unsigned int file_mode;
};

/**
 * struct store_stats - a snapshot of a store's counters.
 * @data_bytes: bytes of data allocated now: mem, chunks times chunk size;
 *	file, the allocated blocks of every LUN file (st_blocks * 512).
 * @meta_bytes: bytes of the store's own in-memory bookkeeping (hash tables,
 *	per-chunk and per-LUN overheads, slab records, fd cache).
 * @chunks: mem, chunks allocated now; file, LUN files that exist.
 * @writes: store_write() calls that succeeded.
 * @reads: store_read() calls that succeeded.
 * @unmapped_bytes: total bytes deallocated by store_unmap() and
 *	store_write_zeroes() (mem: also by zero-detect; file: the bytes asked
 *	to be punched). store_drop_lun() is not counted.
 * @limit_hits: writes refused with -ENOSPC (mem limit or a full file system).
 * @luns: LUNs holding any data now.
 * @free_bytes: mem, freed chunk memory kept for reuse (still resident);
 *	file, 0.
 * @slab_bytes: mem, bytes of address space mapped for chunk data (only
 *	touched pages are resident); file, 0.
 * @flushes: store_flush() calls.
 * @syncs: file, fdatasync/fsync calls made (FUA writes included); mem, 0.
 * @open_files: file, LUN files open now; mem, 0.
 * @fd_evictions: file, open files closed to make room in the cache; mem, 0.
 * @io_errors: file, calls that failed with -EIO; mem, 0.
 */
struct store_stats {
	uint64_t data_bytes;
	uint64_t meta_bytes;
	uint64_t chunks;
	uint64_t writes;
	uint64_t reads;
	uint64_t unmapped_bytes;
	uint64_t limit_hits;
	uint64_t luns;
	uint64_t free_bytes;
	uint64_t slab_bytes;
	uint64_t flushes;
	uint64_t syncs;
	uint64_t open_files;
	uint64_t fd_evictions;
	uint64_t io_errors;
};

/**
 * store_mem_create() - make a sparse in-memory store.
 * @out: the new store on success; untouched on failure.
 * @p: parameters, or NULL for all defaults.
 *
 * Allocates only the shard array; hash tables, slabs and per-LUN counters
 * appear when data is first written. Unwritten bytes read as zero and cost
 * nothing; a chunk that becomes all zero is freed.
 *
 * Context: any thread; the store is then safe to use from many threads.
 * Return: 0, -EINVAL for a bad @out or parameter, -ENOMEM.
 */
int store_mem_create(struct store **out, const struct store_mem_params *p);

/**
 * store_file_create() - open (or start) a persistent store in a directory.
 * @out: the new store on success; untouched on failure.
 * @p: parameters; @p->dir is required.
 *
 * Creates @p->dir if missing, takes an exclusive lock on DIR/.lock (held
 * until store_destroy() or process exit) and notes which LUN files exist;
 * no LUN file is opened yet. Files not named like a LUN file are ignored.
 *
 * Context: any thread; the store is then safe to use from many threads.
 * Return: 0, -EINVAL for a bad argument (a @p->file_mode outside 0666),
 * -EBUSY if another store holds the directory, -ENOMEM, or the -errno of
 * mkdir/open on @p->dir.
 */
int store_file_create(struct store **out, const struct store_file_params *p);

/**
 * store_destroy() - free a store and everything it holds in memory.
 * @s: the store, or NULL (a no-op).
 *
 * The file store flushes every LUN first and then closes its files; its
 * data stays on disk. A flush error cannot be reported here: call
 * store_flush(@s, STORE_ALL_LUNS) first to see it. The mem store's data is
 * gone.
 *
 * Context: no other call on @s may be running or follow.
 */
void store_destroy(struct store *s);

/**
 * store_kind() - the back end's name.
 * @s: the store.
 *
 * Context: any.
 * Return: "mem" or "file".
 */
const char *store_kind(const struct store *s);

/**
 * store_granularity() - the allocation unit, in bytes.
 * @s: the store.
 *
 * Deallocation and store_mapped() work in whole units of this size: the mem
 * store's chunk size, the file store's file system block size. An unmap
 * covering part of a unit zeroes that part in place.
 *
 * Context: any.
 * Return: a power of two, at least 512.
 */
uint32_t store_granularity(const struct store *s);

/**
 * store_read() - copy bytes out of a LUN.
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 * @off: byte offset, any alignment.
 * @buf: destination of @len bytes.
 * @len: bytes to read; 0 is a no-op. @off + @len <= STORE_MAX_BYTES.
 *
 * Never-written and deallocated bytes read as zero. Each chunk is copied
 * under its shard lock, so a read sees a concurrent single-chunk write to
 * that chunk either wholly or not at all. No heap allocation.
 *
 * Context: any thread, concurrently with any other call but store_destroy().
 * Return: 0, -EINVAL for bad arguments; file store: -EIO for an I/O error,
 * -ENOMEM when no fd-cache entry can be allocated, -EMFILE when out of
 * descriptors (see struct store_file_params).
 */
int store_read(struct store *s, uint32_t lun, uint64_t off, void *buf,
	       size_t len);

/**
 * store_write() - copy bytes into a LUN.
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 * @off: byte offset, any alignment.
 * @buf: @len bytes of data.
 * @len: bytes to write; 0 is a no-op. @off + @len <= STORE_MAX_BYTES.
 * @flags: 0 or STORE_FUA (durable before return: RWF_DSYNC in the file
 *	store; nothing more to do in the mem store).
 *
 * Mem store: a chunk the write leaves all zero is freed, and a zero write to
 * a hole allocates nothing. If the data would need more chunks than the limit
 * leaves, the write fails as a whole and changes nothing. (Only a write that
 * races a deallocation of the same chunks may push usage past the limit, by
 * those chunks, rather than fail half done.)
 *
 * Context: any thread, concurrently with any other call but store_destroy().
 * Return: 0; -EINVAL for bad arguments; -ENOSPC when the mem limit is
 * reached (nothing was changed) or the file system is full; -ENOMEM when out
 * of memory; file store: -EIO, -EMFILE (out of descriptors, nothing was
 * written), or -EFBIG for an offset beyond what the file system of DIR
 * supports. After a failure other than -EINVAL and the mem
 * limit's -ENOSPC the range may, as after a failed WRITE on a disk, hold a
 * mix of old and new data.
 */
int store_write(struct store *s, uint32_t lun, uint64_t off, const void *buf,
		size_t len, unsigned int flags);

/**
 * store_write_zeroes() - make a range read as zero.
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 * @off: byte offset, any alignment.
 * @len: bytes; 0 is a no-op. @off + @len <= STORE_MAX_BYTES.
 * @flags: STORE_FUA and/or STORE_UNMAP (the range may be deallocated).
 *
 * The mem store never keeps an all-zero chunk, so it always deallocates
 * whole chunks and zeroes partial ones in place. The file store punches a
 * hole with STORE_UNMAP and otherwise zeroes with FALLOC_FL_ZERO_RANGE, which
 * keeps the blocks allocated; a LUN without a file is left without one.
 *
 * Context: any thread, concurrently with any other call but store_destroy().
 * Return: 0, -EINVAL; file store: -ENOMEM, -ENOSPC (no room to allocate the
 * zeroed blocks), -EIO.
 */
int store_write_zeroes(struct store *s, uint32_t lun, uint64_t off,
		       uint64_t len, unsigned int flags);

/**
 * store_unmap() - deallocate a range; it then reads as zero.
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 * @off: byte offset, any alignment.
 * @len: bytes; 0 is a no-op. @off + @len <= STORE_MAX_BYTES.
 *
 * Whole units of store_granularity() are freed; the parts of units at the
 * edges of the range are zeroed in place (mem: such a chunk stays allocated
 * unless it is then all zero). Mem store cost: one lookup per chunk of the
 * range, or one pass over every shard's table when the range has more chunks
 * than 1/16 of all table slots; a LUN with no data returns at once.
 *
 * Context: any thread, concurrently with any other call but store_destroy().
 * Return: 0, -EINVAL; file store: -ENOMEM, -ENOSPC (a file system that
 * needs blocks to split an extent), -EIO.
 */
int store_unmap(struct store *s, uint32_t lun, uint64_t off, uint64_t len);

/**
 * store_flush() - make every completed write durable (SYNCHRONIZE CACHE).
 * @s: the store.
 * @lun: a LUN number, or STORE_ALL_LUNS.
 *
 * File store: fdatasyncs each file written since its last flush (reopening
 * one the fd cache has closed) and fsyncs the directory after files were
 * created or unlinked. After an fdatasync of a LUN fails, every later flush
 * of that LUN fails too: the kernel may have dropped the unwritten pages, so
 * a later success would be a lie. Mem store: nothing to do.
 *
 * Context: any thread; may block on disk I/O (file store).
 * Return: 0, -EINVAL for a bad @lun; file store: -EIO, -ENOMEM.
 */
int store_flush(struct store *s, uint32_t lun);

/**
 * store_mapped() - is a byte allocated, and how far does that state run?
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 * @off: byte offset, below STORE_MAX_BYTES.
 * @limit: most bytes to examine from @off, at least 1; clamped so that
 *	@off + @limit <= STORE_MAX_BYTES.
 * @len_out: the length of the run of the same state from @off, 1..@limit
 *	inclusive.
 *
 * For GET LBA STATUS and SEEK_DATA/SEEK_HOLE. The answer has the store's
 * granularity (a run ends where a unit of the other state starts). Mem store
 * cost: one lookup per chunk of a mapped run (bounded by the LUN's chunk
 * count); a hole run is found the same way, or with one pass over every
 * shard's table when @limit spans more than 1/16 of all table slots. File
 * store: two lseek calls.
 *
 * Context: any thread; the answer may be stale as soon as it is returned if
 * another thread writes the range.
 * Return: 1 if @off is allocated, 0 if it is a hole, -EINVAL; file store:
 * -EIO, -ENOMEM.
 */
int store_mapped(struct store *s, uint32_t lun, uint64_t off, uint64_t limit,
		 uint64_t *len_out);

/**
 * store_drop_lun() - free all data of a removed LUN.
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 *
 * Mem store: one pass over every shard's table (O(chunks stored in the
 * whole store)), stopping once the LUN's last chunk is found; a LUN with no
 * data returns at once. File store: closes and unlinks the LUN's file,
 * waiting for calls on that LUN still in flight.
 *
 * Context: the caller must have stopped I/O to @lun; a write racing this
 * call may survive it.
 * Return: 0, -EINVAL, -EIO (unlink failed).
 */
int store_drop_lun(struct store *s, uint32_t lun);

/**
 * store_get_stats() - read a store's counters.
 * @s: the store.
 * @st: filled in; counters a back end does not keep are 0.
 *
 * Mem store: briefly takes each shard lock in turn and walks the per-LUN
 * counter pages (O(shards + LUN groups in use)). File store: reads the
 * directory and stats every LUN file (O(LUN files) system calls), so it is
 * for monitoring, not for every command.
 *
 * Context: any thread. The fields are read one shard (or file) at a time,
 * not as one atomic snapshot.
 */
void store_get_stats(struct store *s, struct store_stats *st);

/**
 * store_lun_bytes() - bytes allocated for one LUN (its thin usage).
 * @s: the store.
 * @lun: LUN number, 0..STORE_MAX_LUNS-1 inclusive.
 *
 * Mem store: chunks times chunk size, from a counter (O(1)). File store:
 * the file's st_blocks * 512 (one fstatat).
 *
 * Context: any thread.
 * Return: the byte count; 0 for a LUN without data or a bad @lun.
 */
uint64_t store_lun_bytes(struct store *s, uint32_t lun);

#ifdef __cplusplus
}
#endif

#endif /* SDSWARM_STORE_H */
