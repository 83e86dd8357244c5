/* SPDX-License-Identifier: MIT */
/*
 * In-process SCSI test harness: a mem store, a LUN table, a fault table and
 * a scsi_target; h_exec() runs one CDB through scsi_exec() and keeps status,
 * sense and data for cmocka assert helpers that name the caller's line.
 */
#ifndef SDSWARM_SCSI_HARNESS_H
#define SDSWARM_SCSI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fault.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "store/store.h"

/* Everything one test needs; the fields are the test's to read and set. */
struct harness {
	struct store *store;
	struct lun_table *luns;
	struct fault_table *faults;
	struct scsi_target tgt; /* luns and faults set; names unset */
	struct scsi_view view; /* used when use_view */
	bool use_view;
	uint32_t nexus; /* the I_T nexus commands come from (0) */
	const char *initiator_name; /* and its initiator's name (NULL) */
	uint16_t port; /* the relative target port (0) */
	struct scsi_stats stats; /* every h_exec() counts here */
	uint8_t cdb[SCSI_CDB_MAX];
	struct iovec iov;
	struct scsi_cmd cmd; /* the last command, out fields filled */
	enum scsi_disposition disp; /* what scsi_exec() returned last */
};

/* Sense data, either format, taken apart. */
struct h_sense {
	bool descriptor; /* 72h (else 70h) */
	uint8_t key, asc, ascq;
	bool info_valid;
	uint64_t info;
	bool sks_valid; /* SKSV with a field pointer */
	bool cd; /* C/D: the pointer is into the CDB */
	bool bpv;
	uint8_t bit;
	uint16_t field;
};

/*
 * CDB bytes as the (pointer, length) pair h_exec() takes:
 * h_exec(h, 0, H_CDB(0x12, 0, 0, 0, 96, 0), SCSI_DIR_READ, buf, 96).
 */
#define H_CDB(...)                                                             \
	((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})

/**
 * h_new() - a harness with an empty LUN table over a fresh mem store.
 * @max_luns: the table's size (0: LUN_DEFAULT_MAX).
 *
 * Context: fails the test (cmocka) on any error.
 * Return: the harness; free with h_free().
 */
struct harness *h_new(uint32_t max_luns);

/**
 * h_free() - tear down; NULL is a no-op.
 * @h: the harness.
 */
void h_free(struct harness *h);

/**
 * h_group() - a typical thin group: 512-byte blocks, WCE on, LBPRZ,
 * vendor "SDSWARM", product "VDISK", revision "0001", non-rotating, block
 * limits 65535/128 transfer, 2^22 unmap, 256 descriptors, 2^22 write same.
 * @name: group name.
 * @first: first LUN number.
 * @count: LUNs.
 * @size: bytes a LUN.
 *
 * Return: the group, for the test to adjust before h_add_group().
 */
struct lun_group h_group(const char *name, uint32_t first, uint32_t count,
			 uint64_t size);

/**
 * h_add_group() - lun_group_add(), failing the test unless it succeeds.
 * @h: the harness.
 * @g: the group.
 *
 * Return: the group index.
 */
unsigned int h_add_group(struct harness *h, const struct lun_group *g);

/**
 * h_new_luns() - h_new() plus one h_group("g0", 0, @count, @size).
 * @max_luns: table size.
 * @count: LUNs 0..count-1.
 * @size: bytes a LUN.
 *
 * Return: the harness.
 */
struct harness *h_new_luns(uint32_t max_luns, uint32_t count, uint64_t size);

/**
 * h_set_view() - commands from now on address LUNs through a view.
 * @h: the harness.
 * @base: first table LUN of the view.
 * @count: LUNs in the view.
 */
void h_set_view(struct harness *h, uint32_t base, uint32_t count);

/**
 * h_exec_iov() - run one command through scsi_exec().
 * @h: the harness; h->cmd and h->disp get the result.
 * @lun: LUN number (in the view, if one is set).
 * @cdb: CDB bytes.
 * @cdb_len: their count, at most SCSI_CDB_MAX.
 * @dir: the direction the "transport" declares.
 * @iov: data buffers.
 * @iovcnt: their count.
 * @xfer_len: expected transfer length.
 *
 * Return: the SCSI status.
 */
uint8_t h_exec_iov(struct harness *h, uint32_t lun, const uint8_t *cdb,
		   size_t cdb_len, enum scsi_dir dir, const struct iovec *iov,
		   unsigned int iovcnt, uint32_t xfer_len);

/**
 * h_exec() - h_exec_iov() with one buffer of @len bytes (xfer_len @len).
 * @h: the harness.
 * @lun: LUN number.
 * @cdb: CDB bytes.
 * @cdb_len: their count.
 * @dir: data direction.
 * @buf: the buffer, or NULL with @len 0.
 * @len: its size.
 *
 * Return: the SCSI status.
 */
uint8_t h_exec(struct harness *h, uint32_t lun, const uint8_t *cdb,
	       size_t cdb_len, enum scsi_dir dir, void *buf, size_t len);

/**
 * h_clear_ua() - TEST UNIT READY until no unit attention is left (at most
 * 16 tries; fails the test if one remains).
 * @h: the harness.
 * @lun: LUN number.
 */
void h_clear_ua(struct harness *h, uint32_t lun);

/**
 * h_sense_parse() - take sense data apart.
 * @s: sense bytes.
 * @len: their count.
 * @out: the fields.
 *
 * Return: true for well-formed 70h/71h/72h/73h data, false otherwise.
 */
bool h_sense_parse(const uint8_t *s, size_t len, struct h_sense *out);

/* The assert helpers: fail the test at the caller's line. */
void h_expect_good_at(struct harness *h, const char *file, int line);
void h_expect_sense_at(struct harness *h, uint8_t key, uint8_t asc,
		       uint8_t ascq, const char *file, int line);
void h_expect_field_at(struct harness *h, bool cd, uint16_t byte, int bit,
		       const char *file, int line);
void h_expect_info_at(struct harness *h, uint64_t info, const char *file,
		      int line);

/* The last command ended GOOD. */
#define h_expect_good(h) h_expect_good_at((h), __FILE__, __LINE__)
/* The last command ended CHECK CONDITION with this key/ASC/ASCQ. */
#define h_expect_sense(h, key, asc, ascq)                                      \
	h_expect_sense_at((h), (key), (asc), (ascq), __FILE__, __LINE__)
/*
 * ... and its sense-key-specific field pointer names CDB (@cd true) or
 * parameter list byte @byte, bit @bit (-1: no bit pointer, BPV 0).
 */
#define h_expect_field(h, cd, byte, bit)                                       \
	h_expect_field_at((h), (cd), (byte), (bit), __FILE__, __LINE__)
/* ... INVALID FIELD IN CDB at @byte/@bit. */
#define h_expect_invalid_cdb(h, byte, bit)                                     \
	do {                                                                   \
		h_expect_sense((h), SK_ILLEGAL_REQUEST, 0x24, 0x00);           \
		h_expect_field((h), true, (byte), (bit));                      \
	} while (0)
/* ... INVALID FIELD IN PARAMETER LIST at @byte/@bit. */
#define h_expect_invalid_param(h, byte, bit)                                   \
	do {                                                                   \
		h_expect_sense((h), SK_ILLEGAL_REQUEST, 0x26, 0x00);           \
		h_expect_field((h), false, (byte), (bit));                     \
	} while (0)
/* ... and its INFORMATION field holds @info. */
#define h_expect_info(h, info) h_expect_info_at((h), (info), __FILE__, __LINE__)

#endif /* SDSWARM_SCSI_HARNESS_H */
