/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user space callchains: attr.defer_callchain, attr.defer_output
 * and PERF_RECORD_CALLCHAIN_DEFERRED.
 *
 * A sample of an event with defer_callchain does not walk the user stack.
 * Its callchain ends with PERF_CONTEXT_USER_DEFERRED and a cookie that
 * names the current kernel entry of the task.  Before the task returns to
 * user space, the user stack is walked once (frame pointers) and one
 * PERF_RECORD_CALLCHAIN_DEFERRED with that cookie is written for the events
 * with defer_output that perf_iterate_sb() visits: those of the task's
 * context and the side-band events of the CPU
 * (perf_unwind_deferred_callback()).  A sample taken after that record
 * was written (in the task work that wrote it, on the way out) carries its
 * user stack in place, after PERF_CONTEXT_USER: a cookie in it would name
 * a record that is already out.
 *
 * The workload runs in workload_main() -> level1() -> level2() -> level3().
 * Its kernel entries (syscalls, page faults) and the instructions around
 * them sit in one asm block inside level3(), so that the user pc of the
 * entry and the frame record the frame pointer register points at are
 * known.  Every level stores the return address it will return to, so the
 * expected deferred callchain is known exactly:
 *
 *   ips[0]  user pc of the kernel entry (instruction_pointer() of the
 *           entry registers: after the syscall, or the faulting store)
 *   ips[1]  return address into level2()   (read from level3()'s frame)
 *   ips[2]  return address into level1()
 *   ips[3]  return address into workload_main()
 *
 * Build with frame pointers: -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer (see the Makefile).
 */
#ifndef DEFERRED_CALLCHAIN_H
#define DEFERRED_CALLCHAIN_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <linux/perf_event.h>

#include "../kselftest.h"
#include "deferred_records.h"

/*
 * The levels must stay functions of their own and the asm blocks must be
 * inside level3() even at -O0 (the kernel's noinline and __always_inline
 * are not available to user space).
 */
#define DC_ATTR(a)		__attribute__((a))
#define DC_NOINLINE		DC_ATTR(noinline)
#define DC_ALWAYS_INLINE	DC_ATTR(always_inline)

#define DC_SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CALLCHAIN)
#define DC_PERIOD_NS	100000		/* cpu-clock sample period: 10 kHz */
#define DC_RUN_NS	300000000ULL	/* how long each workload runs */
#define DC_REC_BYTES	256		/* a sample and its share of a record */
#define DC_LOG_SIZE	(32UL * 1024 * 1024) /* copy of all records read */
#define DC_MAX_RINGS	4		/* CPUs a per-CPU session watches */
#define DC_SYSCALLS	100		/* syscalls per call of the workload */
#define DC_FAULT_PAGES	32		/* pages touched per call */
#define DC_FAULT_AREA	2048		/* pages of fresh memory to fault in */
#define DC_READ_CHUNK	(1024UL * 1024)	/* buffer of the long readv() */
/*
 * iovecs, all on that buffer. The ring is drained only between readv()
 * calls, so all the samples of one call must fit in it: at 10 kHz, with
 * kernel callchains, one 256 MiB readv() filled 190 KiB of the 256 KiB
 * ring in a TCG guest, and overflowed it on a slower host.
 */
#define DC_READ_IOVS	32
#define DC_PF_KTHREAD	0x00200000	/* PF_KTHREAD in /proc/PID/stat */

#if defined(__x86_64__)
#define DC_HAVE_WORKLOAD	1
#define DC_USER_TOP		0x0000800000000000ULL
#define DC_KERNEL_ADDR		0xffffffff81000000UL
#elif defined(__aarch64__)
#define DC_HAVE_WORKLOAD	1
#define DC_USER_TOP		0x0001000000000000ULL
#define DC_KERNEL_ADDR		0xffff800000000000UL
#else
#define DC_HAVE_WORKLOAD	0
#define DC_USER_TOP		(~0ULL)
#define DC_KERNEL_ADDR		0UL
#endif

enum dc_op {
	DC_OP_SYSCALLS,		/* getppid() in a loop */
	DC_OP_LONG_READ,	/* one long readv() from /dev/zero */
	DC_OP_FAULTS,		/* write to fresh pages */
	DC_OP_HOSTILE,		/* getppid() loop with a hostile frame pointer */
};

enum dc_hostile {
	DC_HOSTILE_KERNEL,	/* frame pointer is a kernel address */
	DC_HOSTILE_UNMAPPED,	/* ... an unmapped user address above sp */
	DC_HOSTILE_MISALIGNED,	/* ... a valid frame + 1 */
	DC_HOSTILE_SELF,	/* ... a frame record that points at itself */
	DC_HOSTILE_CYCLE,	/* ... two frame records that point at each other */
};

/* A frame record as the frame pointer register points at it. */
struct dc_frame {
	unsigned long fp;
	unsigned long ra;
};

struct dc_work {
	enum dc_op op;
	unsigned long count;		/* loop iterations in the asm block */
	unsigned long nr;		/* syscall number */
	unsigned long arg[3];		/* syscall arguments */
	char *pages;			/* DC_OP_FAULTS: next page to touch */
	unsigned long step;		/* DC_OP_FAULTS: page size */
	unsigned long bad_fp;		/* DC_OP_HOSTILE */
	bool misalign;			/* DC_OP_HOSTILE: use level3's fp + 1 */
	long ret;			/* last syscall return value */
	/* Filled in by the workload: */
	unsigned long begin;		/* first instruction of the asm block */
	unsigned long end;		/* last address with the same user stack */
	unsigned long pc;		/* user pc of the kernel entries */
	unsigned long ra[3];		/* into level2, level1, workload_main */
	/* Expected deferred callchain inside [begin, end] (DC_OP_HOSTILE) */
	unsigned long exp_nr;
	unsigned long exp[3];
};

/* One ring buffer: a sampling event and maybe its side-band event. */
struct dc_ring {
	int fd;				/* owns the mmap */
	int sb_fd;			/* side-band event with defer_output */
	int cpu;
	struct perf_event_mmap_page *pg;
	size_t map_len;
	char *data;
	__u64 data_size;
};

struct dc_session {
	struct dc_ring ring[DC_MAX_RINGS];
	int nr_rings;
	/* Records copied out of the rings: struct dc_logrec + the record. */
	char *log;
	size_t log_len;
	__u64 bytes;			/* read from the rings */
	__u64 t_stop;			/* CLOCK_MONOTONIC before disabling */
	int err;			/* drain or run error */
	char why[128];			/* ... what it was */
};

struct dc_logrec {
	__u32 ring;
	__u32 size;
};

struct dc_config {
	__u32 type;
	__u64 config;
	__u64 period;
	pid_t pid;
	bool defer;
	bool self_output;
};

struct dc_sample {
	const __u64 *chain;
	__u64 nr;
	__u64 ip;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u16 misc;
	int ring;
};

struct dc_deferred {
	const __u64 *ips;
	__u64 nr;
	__u64 cookie;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u16 misc;
	int ring;
};

struct dc_records {
	struct dc_sample *samples;
	struct dc_deferred *deferred;
	size_t nr_samples;
	size_t nr_deferred;
	__u64 lost;
	size_t throttled;
};

/* What one run is expected to show. */
struct dc_expect {
	const struct dc_work *w;
	bool defer;
	bool self_output;	/* tail samples may lose their record */
	bool per_cpu;
	int pinned_ring;	/* all of our records in this ring, or -1 */
};

struct dc_result {
	size_t samples;		/* of our task */
	size_t user_samples;
	size_t cookies;		/* distinct cookies in our deferred records */
	size_t deferred;	/* deferred records of our task */
	size_t excused;		/* samples after t_stop without a record */
	size_t workload;	/* user stacks that start in the asm block */
	size_t at_pc;		/* ... at the pc of its kernel entries */
	size_t entries;		/* cookies of kernel samples in those entries */
	size_t other_entries;	/* ... of other kernel entries at that pc */
	__u64 entry_frame;	/* outermost kernel ip of those samples */
	size_t kthread_samples;
	size_t other_ring;	/* records not in the ring of their sample */
	size_t max_per_cookie;	/* samples sharing the cookie of one entry */
	size_t answered_before;	/* samples whose cookie's records precede them */
	size_t in_place;	/* deferral on, user stack in the sample */
	size_t marked;		/* deferral on, a cookie in the sample */
	__u64 lost;		/* records the rings lost (PERF_RECORD_LOST) */
	size_t unanswered;	/* cookies without a record, records lost */
	size_t orphans;		/* records without a sample, records lost */
	size_t bad;
	char why[256];
};

/* What the samples of our task say about each of its deferred records. */
struct dc_tally {
	size_t samples;		/* samples whose cookie the record answers */
	bool entry;		/* one of them in a kernel entry of the workload */
	bool other;		/* one in another kernel entry at the same pc */
};

/* A kernel sample at the workload's pc and the record that answers it. */
struct dc_cand {
	size_t rec;
	__u64 frame;		/* outermost kernel ip of the sample */
};

struct dc_state {
	const struct dc_expect *e;
	struct dc_deferred *ours;	/* deferred records of our task, by cookie */
	size_t nr_ours;
	struct dc_tally *tally;		/* one per record in ours */
	struct dc_cand *cand;
	size_t nr_cand;
	__u64 *unanswered;		/* cookies without a record */
	size_t nr_unanswered;
	__u64 lost;
};

/* deferred_lib.c */
long level2(struct dc_work *w);
long level1(struct dc_work *w);
void dc_session_init(struct dc_session *s);
void dc_session_close(struct dc_session *s);
int dc_session_open(struct dc_session *s, const struct dc_config *c,
		    bool per_cpu);
unsigned long dc_run(struct dc_session *s, struct dc_work *w,
		     unsigned long max_calls, bool idle_tail);
int dc_check(const struct dc_expect *e, struct dc_session *s,
	     struct dc_result *res);

#endif /* DEFERRED_CALLCHAIN_H */
