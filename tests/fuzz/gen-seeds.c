// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpora of tests/fuzz/ (run by tests/fuzz/gen-corpus.sh):
 * a few well-formed inputs per harness, in each harness's input format, so
 * that fuzzing starts past the parsers' first checks (valid iSCSI logins,
 * CRC-correct GPTs, real EBR chains, CDBs with their parameter lists).
 * Deterministic: the same tree gives the same files.
 *
 * Usage: gen-seeds DIR (writes DIR/HARNESS/NAME).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "bytes.h"
#include "ptable.h"
#include "sdnum.h"

static const char *outdir;

/* A growing byte buffer. */
struct buf {
	uint8_t b[1 << 17];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b)) {
		fprintf(stderr, "gen-seeds: seed too large\n");
		exit(1);
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void buf_le16(struct buf *b, uint16_t v)
{
	put8(b, (uint8_t)v);
	put8(b, (uint8_t)(v >> 8));
}

static void buf_le32(struct buf *b, uint32_t v)
{
	buf_le16(b, (uint16_t)v);
	buf_le16(b, (uint16_t)(v >> 16));
}

static void mkdir_p(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "gen-seeds: mkdir %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
}

static void emit(const char *harness, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, harness);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "gen-seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void emit_str(const char *harness, const char *name, const char *s)
{
	emit(harness, name, s, strlen(s));
}

/* ---- cdb: lun, flags, cdb_len, xfer_len (LE16), cdb, data-out ---------- */

enum { DIR_NONE = 0, DIR_READ = 1, DIR_WRITE = 2 };

static void cdb_cmd(struct buf *b, uint8_t lun, uint8_t flags,
		    const uint8_t *cdb, uint8_t cdb_len, uint16_t xfer,
		    const void *dout)
{
	put8(b, lun);
	put8(b, flags);
	put8(b, cdb_len);
	buf_le16(b, xfer);
	put(b, cdb, cdb_len);
	if ((flags & 3) == DIR_WRITE && xfer)
		put(b, dout, xfer);
}

#define CDB(b, lun, flags, xfer, dout, ...)                                    \
	do {                                                                   \
		const uint8_t c_[] = {__VA_ARGS__};                            \
		cdb_cmd((b), (lun), (flags), c_, sizeof(c_), (xfer), (dout));  \
	} while (0)

static void gen_cdb(void)
{
	static uint8_t data[4096];
	uint8_t p[64];
	struct buf *b = calloc(1, sizeof(*b));
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);

	/* discovery: what an initiator sends first */
	b->n = 0;
	CDB(b, 0, DIR_NONE, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	CDB(b, 0, DIR_READ, 96, NULL, 0x12, 0, 0, 0, 96, 0);
	CDB(b, 0, DIR_READ, 255, NULL, 0x12, 1, 0x00, 0, 255, 0);
	CDB(b, 0, DIR_READ, 255, NULL, 0x12, 1, 0x83, 0, 255, 0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x12, 1, 0xb0, 0, 64, 0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x12, 1, 0xb1, 0, 64, 0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x12, 1, 0xb2, 0, 64, 0);
	CDB(b, 0, DIR_READ, 8, NULL, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	CDB(b, 0, DIR_READ, 32, NULL, 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 32, 0, 0);
	CDB(b, 0, DIR_READ, 256, NULL, 0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0);
	emit("cdb", "discover", b->n ? b->b : NULL, b->n);

	/* write, read back, verify, compare and write */
	b->n = 0;
	CDB(b, 1, DIR_WRITE, 1024, data, 0x2a, 0, 0, 0, 0, 8, 0, 0, 2, 0);
	CDB(b, 1, DIR_READ, 1024, NULL, 0x28, 0, 0, 0, 0, 8, 0, 0, 2, 0);
	CDB(b, 1, DIR_WRITE, 512, data, 0x2f, 0x02, 0, 0, 0, 8, 0, 0, 1, 0);
	CDB(b, 1, DIR_WRITE, 1024, data, 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0,
	    0, 1, 0, 0);
	CDB(b, 3, DIR_WRITE, 4096, data, 0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 8, 0, 0);
	CDB(b, 3, DIR_READ, 4096, NULL, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0,
	    0, 8, 0, 0);
	CDB(b, 2, DIR_WRITE, 4096, data, 0xaa, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0);
	CDB(b, 2, DIR_READ, 4096, NULL, 0xa8, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0);
	CDB(b, 0, DIR_NONE, 0, NULL, 0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	emit("cdb", "readwrite", b->b, b->n);

	/* the partition table area: the synthetic GPT must survive a write
	 * of LBA 0 (TEST UNIT READY first: the power-on unit attention) */
	b->n = 0;
	CDB(b, 0, DIR_NONE, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	CDB(b, 0, DIR_READ, 4096, NULL, 0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0);
	CDB(b, 0, DIR_WRITE, 512, data, 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	CDB(b, 0, DIR_READ, 4096, NULL, 0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0);
	CDB(b, 2, DIR_READ, 4096, NULL, 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	CDB(b, 2, DIR_WRITE, 4096, data, 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	emit("cdb", "ptable", b->b, b->n);

	/* thin provisioning: write same (unmap), unmap, get lba status */
	b->n = 0;
	CDB(b, 0, DIR_WRITE, 512, data, 0x93, 0x08, 0, 0, 0, 0, 0, 0, 0, 100, 0,
	    0, 0, 16, 0, 0);
	memset(p, 0, sizeof(p));
	put_be16(p, 22);
	put_be16(p + 2, 16);
	put_be64(p + 8, 200);
	put_be32(p + 16, 8);
	CDB(b, 0, DIR_WRITE, 24, p, 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 100, 0,
	    0, 0, 64, 0, 0);
	CDB(b, 3, DIR_WRITE, 512, data, 0x41, 0, 0, 0, 0, 0, 0, 0, 4, 0);
	emit("cdb", "thin", b->b, b->n);

	/* mode pages */
	b->n = 0;
	CDB(b, 0, DIR_READ, 252, NULL, 0x1a, 0, 0x3f, 0, 252, 0);
	CDB(b, 0, DIR_READ, 512, NULL, 0x5a, 0, 0x3f, 0xff, 0, 0, 0, 2, 0, 0);
	CDB(b, 0, DIR_READ, 32, NULL, 0x1a, 0x08, 0x08, 0, 32, 0);
	memset(p, 0, sizeof(p));
	p[4] = 0x08; /* caching page, WCE off */
	p[5] = 0x12;
	CDB(b, 0, DIR_WRITE, 24, p, 0x15, 0x10, 0, 0, 24, 0);
	memset(p, 0, sizeof(p));
	p[8] = 0x0a; /* control page: D_SENSE */
	p[9] = 0x0a;
	p[10] = 0x04;
	CDB(b, 0, DIR_WRITE, 20, p, 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0);
	CDB(b, 0, DIR_READ, 0x200, NULL, 0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 2, 0, 0,
	    0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x03, 0, 0, 0, 64, 0);
	emit("cdb", "mode", b->b, b->n);

	/* persistent reservations from two nexuses */
	b->n = 0;
	memset(p, 0, sizeof(p));
	put_be64(p + 8, 0x1111);
	CDB(b, 1, DIR_WRITE | 0x4, 24, p, 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0);
	memset(p, 0, sizeof(p));
	put_be64(p + 8, 0x2222);
	CDB(b, 1, DIR_WRITE | 0x8, 24, p, 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0);
	memset(p, 0, sizeof(p));
	put_be64(p, 0x1111);
	CDB(b, 1, DIR_WRITE | 0x4, 24, p, 0x5f, 0x01, 0x05, 0, 0, 0, 0, 0, 24,
	    0);
	CDB(b, 1, DIR_READ | 0x4, 256, NULL, 0x5e, 0x03, 0, 0, 0, 0, 0, 1, 0,
	    0);
	CDB(b, 1, DIR_WRITE | 0x8, 512, data, 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	memset(p, 0, sizeof(p));
	put_be64(p, 0x2222);
	put_be64(p + 8, 0x1111);
	CDB(b, 1, DIR_WRITE | 0x8, 24, p, 0x5f, 0x05, 0x05, 0, 0, 0, 0, 0, 24,
	    0);
	CDB(b, 1, DIR_NONE | 0x4, 0, NULL, 0x16, 0, 0, 0, 0, 0);
	CDB(b, 1, DIR_NONE | 0x4, 0, NULL, 0x17, 0, 0, 0, 0, 0);
	emit("cdb", "reservations", b->b, b->n);

	/* extended copy: one block-to-block segment from LUN 1 to LUN 0 */
	b->n = 0;
	CDB(b, 1, DIR_WRITE, 1024, data, 0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0);
	CDB(b, 0, DIR_READ, 255, NULL, 0x12, 1, 0x83, 0, 255, 0);
	memset(p, 0, sizeof(p));
	p[0] = 1; /* list id */
	p[1] = 0x10; /* list id usage: none */
	put_be16(p + 2, 64); /* two 32-byte identification descriptors */
	put_be32(p + 8, 28); /* one block-to-block segment */
	emit("cdb", "xcopy-head", b->b, b->n);
	{
		uint8_t x[128];

		memset(x, 0, sizeof(x));
		memcpy(x, p, 16);
		x[16] = 0xe4; /* identification descriptor, NAA designator */
		x[20] = 0x01;
		x[21] = 0x03;
		x[23] = 16;
		x[48] = 0xe4;
		x[52] = 0x01;
		x[53] = 0x03;
		x[55] = 16;
		x[80] = 0x02; /* block to block */
		put_be16(x + 82, 0x18);
		put_be16(x + 86, 1);
		put_be16(x + 90, 2);
		put_be64(x + 92, 0);
		put_be64(x + 100, 16);
		CDB(b, 0, DIR_WRITE, 108, x, 0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		    108, 0, 0, 0, 0);
		CDB(b, 0, DIR_READ, 64, NULL, 0x84, 0x00, 1, 0, 0, 0, 0, 0, 0,
		    0, 0, 0, 0, 64, 0, 0);
		CDB(b, 0, DIR_READ, 64, NULL, 0x84, 0x03, 0, 0, 0, 0, 0, 0, 0,
		    0, 0, 0, 0, 64, 0, 0);
	}
	emit("cdb", "xcopy", b->b, b->n);

	/* faults, removable media, start/stop, sanitize, defects, views */
	b->n = 0;
	CDB(b, 3, DIR_READ, 512, NULL, 0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0);
	CDB(b, 4, DIR_NONE, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	CDB(b, 4, DIR_READ, 512, NULL, 0x28, 0, 0, 0, 0, 50, 0, 0, 1, 0);
	CDB(b, 3, DIR_WRITE, 512, data, 0x2a, 0, 0, 0, 0, 100, 0, 0, 1, 0);
	CDB(b, 1, DIR_READ, 512, NULL, 0x28, 0, 0, 0, 0x07, 0xd0, 0, 0, 1, 0);
	CDB(b, 1, DIR_READ, 512, NULL, 0x28, 0, 0, 0, 0x03, 0xe8, 0, 0, 1, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x1e, 0, 0, 0, 1, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x1b, 0, 0, 0, 0x02, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x1e, 0, 0, 0, 0, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x1b, 0, 0, 0, 0x02, 0);
	CDB(b, 2, DIR_NONE, 0, NULL, 0x1b, 0, 0, 0, 0x03, 0);
	CDB(b, 0, DIR_READ, 8, NULL, 0x37, 0, 0x0c, 0, 0, 0, 0, 0, 8, 0);
	CDB(b, 0x10 | 1, DIR_READ | 0x10, 96, NULL, 0x12, 0, 0, 0, 96, 0);
	CDB(b, 0, DIR_READ, 64, NULL, 0x4d, 0, 0x40, 0, 0, 0, 0, 0, 64, 0);
	CDB(b, 0, DIR_NONE, 0, NULL, 0x1d, 0x04, 0, 0, 0, 0);
	CDB(b, 3, DIR_NONE, 0, NULL, 0x48, 0x01, 0, 0, 0, 0, 0, 0, 0, 0);
	emit("cdb", "misc", b->b, b->n);
	free(b);
}

/* ---- iscsi: portal byte, then the initiator's byte stream -------------- */

struct ini {
	struct buf *b;
	uint32_t itt, cmdsn, expstatsn;
};

static void pdu(struct ini *s, const uint8_t bhs[48], const void *data,
		size_t len)
{
	static const uint8_t zero[4];
	uint8_t h[48];

	memcpy(h, bhs, 48);
	put_be24(h + 5, (uint32_t)len);
	put(s->b, h, 48);
	if (len) {
		put(s->b, data, len);
		put(s->b, zero, (4 - len % 4) % 4);
	}
}

/* Login Request: stage flags in byte 1, keys as "k=v\0" text. */
static void login(struct ini *s, uint8_t flags, const char *keys, size_t len,
		  uint16_t tsih)
{
	uint8_t h[48] = {0x43, flags, 0, 0};

	h[8] = 0x40; /* ISID: random format */
	h[9] = 0x00;
	h[10] = 0x02;
	h[11] = 0x3d;
	h[13] = 0x01;
	put_be16(h + 14, tsih);
	put_be32(h + 16, s->itt);
	put_be32(h + 24, s->cmdsn);
	put_be32(h + 28, s->expstatsn++);
	pdu(s, h, keys, len);
}

static void scsi(struct ini *s, uint8_t lun, uint8_t rw, uint32_t edtl,
		 const uint8_t *cdb, size_t cdb_len, const void *imm,
		 size_t imm_len)
{
	uint8_t h[48] = {0x01, (uint8_t)(0x80 | rw | 0x01)};

	h[9] = lun;
	put_be32(h + 16, ++s->itt);
	put_be32(h + 20, edtl);
	put_be32(h + 24, s->cmdsn++);
	put_be32(h + 28, s->expstatsn);
	memcpy(h + 32, cdb, cdb_len);
	pdu(s, h, imm, imm_len);
}

static void data_out(struct ini *s, uint8_t lun, uint32_t ttt, uint32_t off,
		     uint32_t datasn, const void *d, size_t len, bool final)
{
	uint8_t h[48] = {0x05, final ? 0x80 : 0x00};

	h[9] = lun;
	put_be32(h + 16, s->itt);
	put_be32(h + 20, ttt);
	put_be32(h + 28, s->expstatsn);
	put_be32(h + 36, datasn);
	put_be32(h + 40, off);
	pdu(s, h, d, len);
}

#define KEYS(s) (s), sizeof(s) /* the literal's final NUL ends the last key */

static const char names_normal[] =
	"InitiatorName=iqn.2026-01.test:fuzz-a\0SessionType=Normal\0TargetName=iqn.2026-01.io.sdswarm.fuzz:t0\0HeaderDigest=None\0DataDigest=None\0MaxRecvDataSegmentLength=65536\0ImmediateData=Yes\0InitialR2T=No\0MaxBurstLength=65536\0FirstBurstLength=16384\0MaxOutstandingR2T=1\0ErrorRecoveryLevel=0";

static void login_normal(struct ini *s)
{
	/* security stage (no authentication), then operational, then FFP */
	login(s, 0x81,
	      KEYS("InitiatorName=iqn.2026-01.test:fuzz-a\0SessionType=Normal\0TargetName=iqn.2026-01.io.sdswarm.fuzz:t0\0AuthMethod=None"),
	      0);
	login(s, 0x87,
	      KEYS("HeaderDigest=None\0DataDigest=None\0MaxRecvDataSegmentLength=65536\0ImmediateData=Yes\0InitialR2T=No\0MaxBurstLength=65536\0FirstBurstLength=16384"),
	      0);
}

static void logout(struct ini *s)
{
	uint8_t h[48] = {0x46, 0x80};

	put_be32(h + 16, ++s->itt);
	put_be32(h + 24, s->cmdsn);
	put_be32(h + 28, s->expstatsn);
	pdu(s, h, NULL, 0);
}

static void gen_iscsi(void)
{
	static uint8_t data[16384];
	struct buf *b = calloc(1, sizeof(*b));
	struct ini s;
	uint8_t cdb[16], h[48];
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);

	/* discovery: SendTargets */
	b->n = 0;
	put8(b, 0);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1, .expstatsn = 0};
	login(&s, 0x87,
	      KEYS("InitiatorName=iqn.2026-01.test:fuzz-a\0SessionType=Discovery\0HeaderDigest=None\0DataDigest=None"),
	      0);
	memset(h, 0, sizeof(h));
	h[0] = 0x04;
	h[1] = 0x80;
	put_be32(h + 16, ++s.itt);
	put_be32(h + 20, 0xffffffff);
	put_be32(h + 24, s.cmdsn++);
	put_be32(h + 28, s.expstatsn);
	pdu(&s, h, KEYS("SendTargets=All"));
	logout(&s);
	emit("iscsi", "discovery", b->b, b->n);

	/* a one-PDU login straight to full feature phase, then commands */
	b->n = 0;
	put8(b, 0);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login(&s, 0x87, KEYS(names_normal), 0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x12;
	cdb[4] = 96;
	scsi(&s, 0, 0x40, 96, cdb, 6, NULL, 0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0xa0;
	cdb[8] = 1;
	scsi(&s, 0, 0x40, 256, cdb, 12, NULL, 0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x25;
	scsi(&s, 1, 0x40, 8, cdb, 10, NULL, 0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x28;
	cdb[8] = 8;
	scsi(&s, 1, 0x40, 4096, cdb, 10, NULL, 0);
	logout(&s);
	emit("iscsi", "login-inquiry", b->b, b->n);

	/* security then operational stage, writes: immediate, unsolicited
	 * Data-Out, and one past the first burst that needs an R2T */
	b->n = 0;
	put8(b, 0);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login_normal(&s);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x2a;
	cdb[8] = 2;
	scsi(&s, 0, 0x20, 1024, cdb, 10, data, 1024);
	cdb[5] = 8;
	cdb[8] = 16;
	scsi(&s, 0, 0x20, 8192, cdb, 10, data, 4096);
	data_out(&s, 0, 0xffffffff, 4096, 0, data + 4096, 4096, true);
	cdb[5] = 64;
	cdb[7] = 0;
	cdb[8] = 64;
	scsi(&s, 0, 0x20, 32768, cdb, 10, data, 8192);
	data_out(&s, 0, 0xffffffff, 8192, 0, data + 8192, 8192, true);
	/* the R2T's TTT is the target's choice: a guess the fuzzer mutates */
	data_out(&s, 0, 0x00010001, 16384, 0, data, 16384, true);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x35;
	scsi(&s, 0, 0, 0, cdb, 10, NULL, 0);
	logout(&s);
	emit("iscsi", "writes", b->b, b->n);

	/* NOP-Out ping, task management, a text request in FFP */
	b->n = 0;
	put8(b, 0);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login(&s, 0x87, KEYS(names_normal), 0);
	memset(h, 0, sizeof(h));
	h[0] = 0x40;
	h[1] = 0x80;
	put_be32(h + 16, ++s.itt);
	put_be32(h + 20, 0xffffffff);
	put_be32(h + 24, s.cmdsn);
	put_be32(h + 28, s.expstatsn);
	pdu(&s, h, "ping", 4);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x28;
	cdb[4] = 100; /* LBA 100 of LUN 2: the hang fault */
	cdb[8] = 1;
	scsi(&s, 2, 0x40, 512, cdb, 10, NULL, 0);
	memset(h, 0, sizeof(h));
	h[0] = 0x42;
	h[1] = 0x81; /* ABORT TASK */
	h[9] = 2;
	put_be32(h + 16, s.itt + 1);
	put_be32(h + 20, s.itt);
	put_be32(h + 24, s.cmdsn);
	put_be32(h + 28, s.expstatsn);
	put_be32(h + 32, s.cmdsn - 1);
	s.itt++;
	pdu(&s, h, NULL, 0);
	h[1] = 0x85; /* LOGICAL UNIT RESET */
	put_be32(h + 16, ++s.itt);
	pdu(&s, h, NULL, 0);
	memset(h, 0, sizeof(h));
	h[0] = 0x04;
	h[1] = 0x80;
	put_be32(h + 16, ++s.itt);
	put_be32(h + 20, 0xffffffff);
	put_be32(h + 24, s.cmdsn++);
	put_be32(h + 28, s.expstatsn);
	pdu(&s, h, KEYS("SendTargets=All\0MaxRecvDataSegmentLength=8192"));
	logout(&s);
	emit("iscsi", "tmf-nop-text", b->b, b->n);

	/* the second target, 4 KiB LUNs, reads through the delay fault */
	b->n = 0;
	put8(b, 0);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login(&s, 0x87,
	      KEYS("InitiatorName=iqn.2026-01.test:fuzz-b\0SessionType=Normal\0TargetName=iqn.2026-01.io.sdswarm.fuzz:t1\0HeaderDigest=CRC32C,None\0DataDigest=None"),
	      0);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x88;
	cdb[13] = 1;
	scsi(&s, 0, 0x40, 4096, cdb, 16, NULL, 0);
	emit("iscsi", "target1", b->b, b->n);

	/* CHAP portal: a CHAP login up to the challenge */
	b->n = 0;
	put8(b, 1);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login(&s, 0x01,
	      KEYS("InitiatorName=iqn.2026-01.test:fuzz-a\0SessionType=Normal\0TargetName=iqn.2026-01.io.sdswarm.chap:t0\0AuthMethod=CHAP,None"),
	      0);
	login(&s, 0x01, KEYS("CHAP_A=5"), 0);
	login(&s, 0x81,
	      KEYS("CHAP_N=fuzzuser\0CHAP_R=0x00112233445566778899aabbccddeeff\0CHAP_I=7\0CHAP_C=0x0102030405060708090a0b0c0d0e0f10"),
	      0);
	emit("iscsi", "chap", b->b, b->n);

	/* CHAP portal: an initiator outside the ACL, and a discovery */
	b->n = 0;
	put8(b, 1);
	s = (struct ini){.b = b, .itt = 1, .cmdsn = 1};
	login(&s, 0x81,
	      KEYS("InitiatorName=iqn.2026-01.test:stranger\0SessionType=Discovery\0AuthMethod=None"),
	      0);
	emit("iscsi", "chap-acl", b->b, b->n);
	free(b);
}

/* ---- ptable: bs selector, nblocks (LE32), then LBA (LE32) + block ------ */

static void gen_one_ptable(const char *name, enum ptable_kind kind, uint32_t bs,
			   uint64_t nblocks, unsigned int nparts, bool backup)
{
	struct ptable_geom g = {.kind = kind,
				.block_size = bs,
				.nblocks = nblocks,
				.nparts = nparts,
				.wwn = 0x6001405fa57e0001ull,
				.lun = 3};
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t *blk = malloc(bs);
	uint64_t lba = 0, next;
	unsigned int sel;

	for (sel = 0; sel < 4 && (512u << sel) != bs; sel++)
		;
	if (ptable_check(&g, NULL) || sel == 4 || nblocks > UINT32_MAX) {
		fprintf(stderr, "gen-seeds: bad geometry for %s\n", name);
		exit(1);
	}
	put8(b, (uint8_t)sel);
	buf_le32(b, (uint32_t)nblocks);
	while (ptable_next_synthetic(&g, lba, &next) == 1) {
		bool tail = kind == PTABLE_GPT && next > nblocks / 2;

		lba = next + 1;
		if (tail && !backup)
			continue;
		if (ptable_read(&g, next, 1, blk)) {
			fprintf(stderr, "gen-seeds: ptable_read %s\n", name);
			exit(1);
		}
		/* the backup GPT counts back from the last block */
		buf_le32(b, tail ? 0x80000000u | (uint32_t)(nblocks - 1 - next)
				 : (uint32_t)next);
		put(b, blk, bs);
	}
	emit("ptable", name, b->b, b->n);
	free(blk);
	free(b);
}

static void gen_ptable(void)
{
	static const uint8_t empty[5] = {0, 0, 8, 0, 0};
	uint8_t mbr[4 + 5 + 512];

	gen_one_ptable("gpt-512-4", PTABLE_GPT, 512, 1u << 16, 4, true);
	gen_one_ptable("gpt-4096-2", PTABLE_GPT, 4096, 1u << 14, 2, false);
	gen_one_ptable("gpt-512-16", PTABLE_GPT, 512, 1u << 16, 16, true);
	gen_one_ptable("mbr-512-3", PTABLE_MBR, 512, 1u << 15, 3, false);
	gen_one_ptable("mbr-512-8", PTABLE_MBR, 512, 1u << 16, 8, false);
	gen_one_ptable("mbr-4096-6", PTABLE_MBR, 4096, 1u << 14, 6, false);
	gen_one_ptable("mbr-1024-5", PTABLE_MBR, 1024, 1u << 15, 5, false);
	emit("ptable", "empty", empty, sizeof(empty));
	/* a hand-made MBR: one bootable primary, a protective 0xEE entry */
	memset(mbr, 0, sizeof(mbr));
	mbr[0] = 0;
	mbr[1] = 0x00;
	mbr[2] = 0x10; /* 4096 blocks */
	mbr[9 + 446] = 0x80;
	mbr[9 + 446 + 4] = 0x83;
	mbr[9 + 446 + 8] = 0x08;
	mbr[9 + 446 + 12] = 0x00;
	mbr[9 + 446 + 13] = 0x08;
	mbr[9 + 446 + 16 + 4] = 0xee;
	mbr[9 + 446 + 16 + 8] = 0x01;
	mbr[9 + 446 + 16 + 12] = 0xff;
	mbr[9 + 510] = 0x55;
	mbr[9 + 511] = 0xaa;
	emit("ptable", "mbr-hybrid", mbr, sizeof(mbr));
}

/* ---- sdnum: selector, then a name or dev_t values ----------------------- */

static void gen_sdnum(void)
{
	static const char *const names[] = {
		"sda",	"sdz",	  "sdaa",  "sdzz",    "sdaaa",	  "sdaaaa",
		"sda1", "sdaa15", "sdb16", "sdzz255", "sdxfxxvx", "sdfxshrxw",
		"sda0", "sda01",  "sdA",   "sd",      "sda256"};
	const struct sdnum_scheme *sc;
	struct buf b;
	unsigned int i, j;
	char name[32];
	uint32_t dev;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		b.n = 0;
		put8(&b, 0); /* prefix "sd" */
		put(&b, names[i], strlen(names[i]));
		snprintf(name, sizeof(name), "name-%s", names[i]);
		emit("sdnum", name, b.b, b.n);
	}
	b.n = 0;
	put8(&b, 1); /* prefix "vd" */
	put(&b, "vdab3", 5);
	emit("sdnum", "name-vd", b.b, b.n);
	/* per scheme: the numbers of a few disks and partitions */
	for (i = 0; (sc = sdnum_scheme_at(i)); i++) {
		static const uint32_t disks[] = {0,   1,    15,	   16,	  255,
						 256, 4095, 18278, 262143};
		static const uint32_t parts[] = {0, 1, 15, 16, 63, 255};

		b.n = 0;
		put8(&b, 0x80);
		put8(&b, 200); /* extmap: ndisks */
		put8(&b, 47); /* parts */
		put8(&b, 0);
		put8(&b, 63); /* dynamic map of 64 disks */
		put8(&b, 5);
		put8(&b, 0);
		put8(&b, 0);
		for (j = 0; j < ARRAY_SIZE(disks); j++) {
			unsigned int k;

			for (k = 0; k < ARRAY_SIZE(parts); k++)
				if (disks[j] < sc->max_disks &&
				    parts[k] <= sc->max_parts &&
				    sc->encode(NULL, disks[j], parts[k],
					       &dev) == 0)
					buf_le32(&b, dev);
		}
		snprintf(name, sizeof(name), "dev-%s", sc->name);
		emit("sdnum", name, b.b, b.n);
	}
}

/* ---- text harnesses ------------------------------------------------------ */

static void gen_fault(void)
{
	static const char *const rules[] = {
		"medium-read luns=0-3 lba=100-200 count=5",
		"medium-write lba=5- ops=write",
		"delay delay=10ms luns=all",
		"delay luns=7 delay=250us ops=read,other",
		"hang luns=2 lba=0x10-0x20",
		"ua asc=0x29 ascq=0 count=1",
		"not-ready asc=4 ascq=2 ops=any",
		"medium-read luns=1023 lba=18446744073709551615",
	};
	char name[32];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		snprintf(name, sizeof(name), "rule-%u", i);
		emit_str("fault", name, rules[i]);
	}
}

static void gen_ctl(void)
{
	emit_str("ctl", "status",
		 "{\"cmd\":\"status\"}\n{\"cmd\":\"status\",\"lun\":1}\n"
		 "{\"cmd\":\"stats\"}");
	emit_str(
		"ctl", "names",
		"{\"cmd\":\"names\"}\n"
		"{\"cmd\":\"names\",\"scheme\":\"dynamic\",\"first\":2,\"count\":3,\"order\":\"lun\"}\n"
		"{\"cmd\":\"names\",\"scheme\":\"wilcox\"}");
	emit_str(
		"ctl", "lun-churn",
		"{\"cmd\":\"lun\",\"op\":\"add\",\"group\":\"big\"}\n"
		"{\"cmd\":\"lun\",\"op\":\"add\",\"lun\":5}\n"
		"{\"cmd\":\"lun\",\"op\":\"resize\",\"lun\":5,\"size\":\"32M\"}\n"
		"{\"cmd\":\"lun\",\"op\":\"offline\",\"lun\":1}\n"
		"{\"cmd\":\"lun\",\"op\":\"online\",\"lun\":1}\n"
		"{\"cmd\":\"lun\",\"op\":\"remove\",\"lun\":0}\n"
		"{\"cmd\":\"status\",\"lun\":5}\n"
		"{\"cmd\":\"names\",\"count\":4}");
	emit_str(
		"ctl", "faults",
		"{\"cmd\":\"fault\",\"op\":\"set\",\"rule\":\"medium-read luns=0-1 lba=10-20 count=2\"}\n"
		"{\"cmd\":\"fault\",\"op\":\"list\"}\n"
		"{\"cmd\":\"fault\",\"op\":\"clear\",\"id\":1}\n"
		"{\"cmd\":\"fault\",\"op\":\"clear\"}\n"
		"{\"cmd\":\"fault\",\"op\":\"set\",\"rule\":\"bogus\"}");
	emit_str("ctl", "bad",
		 "not json\n{}\n{\"cmd\":1}\n{\"cmd\":\"lun\",\"op\":\"x\"}\n"
		 "[1,2]\n{\"cmd\":\"status\",\"lun\":99999999999}");
}

static void gen_config(void)
{
	emit_str("config", "small",
		 "[target]\nmax_luns = 64\nseed = 5\nscheme = wilcox\n"
		 "[luns]\ncount = 4\nsize = 8M\npartitions = 3\n"
		 "ptable = mbr\npartition_sizes = 1M, 2M\n"
		 "[luns.b]\nfirst = 10\ncount = 2\nsize = 1G\n"
		 "block_size = 4096\npartitions = 0\n"
		 "[store]\ntype = mem\nchunk_size = 512\n"
		 "[faults]\nfault.1 = ua luns=0 count=1\n");
	emit_str("config", "iscsi",
		 "[target]\nmax_luns = 32\n[luns]\ncount = 2\nsize = 4M\n"
		 "partitions = 0\n[iscsi]\nenabled = yes\n"
		 "portal = [::1]:3260\ntargets = 2\nluns_per_target = 16\n"
		 "chap_user = u\nchap_secret = 0123456789ab\n"
		 "initiators = iqn.2026-01.test:a\n");
	emit_str("config", "fuse-tcmu",
		 "[target]\nmax_luns = 16\n[luns]\ncount = 1\nsize = 2M\n"
		 "partitions = 0\n[fuse]\nmountpoint = /tmp/x\nthreads = 2\n"
		 "[tcmu]\nenabled = yes\nring_size = 8M\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-seeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir_p(outdir);
	gen_cdb();
	gen_iscsi();
	gen_ptable();
	gen_sdnum();
	gen_fault();
	gen_ctl();
	gen_config();
	return 0;
}
