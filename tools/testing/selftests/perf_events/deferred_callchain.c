// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains: attr.defer_callchain, attr.defer_output and
 * PERF_RECORD_CALLCHAIN_DEFERRED.
 *
 * A sample of an event with defer_callchain does not walk the user stack:
 * its callchain ends with PERF_CONTEXT_USER_DEFERRED and a cookie naming
 * the task's current kernel entry. Before the task returns to user space
 * its user stack is walked once and one PERF_RECORD_CALLCHAIN_DEFERRED
 * with that cookie goes to the task's and the CPU's events with
 * defer_output. A sample taken after that record was written (on the way
 * out) carries its user stack in place, after PERF_CONTEXT_USER.
 *
 * The workload runs workload_main() -> level1() -> level2() -> level3(),
 * each level noting the return address it will return to, with the kernel
 * entries (syscalls, or stores that fault) in one asm block inside
 * level3(): the deferred callchain of a sample in one of them is exactly
 * { the entry's user pc, into level2, into level1, into workload_main }.
 * With a hostile frame pointer in the asm block, it is what the frame
 * records lead to, and the walk stops.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"

#define DC_ATTR(x)	__attribute__((x))
#define PERIOD_NS	100000		/* cpu-clock sample period: 10 kHz */
#define RUN_NS		300000000ULL	/* how long the workload runs */
#define REC_BYTES	256		/* a sample and its share of a record */
#define LOG_SIZE	(32UL << 20)	/* copy of all the records read */
#define MAX_RINGS	4		/* CPUs a per-CPU session watches */
#define SYSCALLS	100		/* getppid() calls per call of level3() */
#define FAULT_PAGES	32		/* pages stored to per call */
#define FAULT_AREA	2048		/* pages of fresh memory */
#define READ_CHUNK	(1024UL * 1024)	/* the buffer of the long readv() */
#define READ_IOVS	32

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_WORKLOAD	1
#else
#define HAVE_WORKLOAD	0
#endif
#if defined(__x86_64__)
#define USER_TOP	0x0000800000000000ULL
#define KERNEL_ADDR	0xffffffff81000000UL
#else
#define USER_TOP	0x0001000000000000ULL
#define KERNEL_ADDR	0xffff800000000000UL
#endif

enum op { OP_SYSCALLS, OP_LONG_READ, OP_FAULTS };

struct work {
	enum op op;
	unsigned long count, nr, arg[3];
	unsigned long fp;		/* the frame pointer inside the block, or 0 */
	char *pages;			/* OP_FAULTS: the next page to store to */
	unsigned long step;
	long ret;
	/* Filled in by level3(): */
	unsigned long begin, pc, end;	/* the asm block; pc: of its entries */
	unsigned long ra[3];		/* into level2, level1, workload_main */
	/* With a hostile fp: the callchain expected after the pc */
	unsigned long exp[3];
	unsigned long exp_nr;
};

/* The kernel entries of the workload, with the frame pointer @w->fp if set. */
static DC_ATTR(always_inline) inline void entries(struct work *w)
{
	unsigned long n = w->count, b, pc, e;
	char *p = w->pages;
	long ret = 0;

#if defined(__x86_64__)
	if (w->op == OP_FAULTS) {
		asm volatile("1: movb $1, (%[p])\n\tadd %[step], %[p]\n\t"
			     "dec %[n]\n\tjnz 1b\n2:\n\t"
			     "lea 1b(%%rip), %[b]\n\tlea 1b(%%rip), %[pc]\n\t"
			     "lea 2b(%%rip), %[e]\n\t"
			     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
			       [p] "+r" (p), [n] "+r" (n)
			     : [step] "r" (w->step) : "memory", "cc");
	} else {
		asm volatile("mov %%rbp, %%r12\n\ttest %[fp], %[fp]\n\t"
			     "cmovnz %[fp], %%rbp\n"
			     "1: mov %[nr], %%rax\n\tmov %[a0], %%rdi\n\t"
			     "mov %[a1], %%rsi\n\tmov %[a2], %%rdx\n\tsyscall\n"
			     "2: dec %[n]\n\tjnz 1b\n3:\n\t"
			     "mov %%r12, %%rbp\n\tmov %%rax, %[ret]\n\t"
			     "lea 1b(%%rip), %[b]\n\tlea 2b(%%rip), %[pc]\n\t"
			     "lea 3b(%%rip), %[e]\n\t"
			     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
			       [ret] "=r" (ret), [n] "+r" (n)
			     : [fp] "r" (w->fp), [nr] "r" (w->nr), [a0] "r" (w->arg[0]),
			       [a1] "r" (w->arg[1]), [a2] "r" (w->arg[2])
			     : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "r12",
			       "memory", "cc");
	}
#elif defined(__aarch64__)
	if (w->op == OP_FAULTS) {
		asm volatile("1: strb wzr, [%[p]]\n\tadd %[p], %[p], %[step]\n\t"
			     "subs %[n], %[n], #1\n\tb.ne 1b\n2:\n\t"
			     "adr %[b], 1b\n\tadr %[pc], 1b\n\tadr %[e], 2b\n\t"
			     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
			       [p] "+r" (p), [n] "+r" (n)
			     : [step] "r" (w->step) : "memory", "cc");
	} else {
		asm volatile("mov x19, x29\n\tcmp %[fp], #0\n\t"
			     "csel x29, %[fp], x29, ne\n"
			     "1: mov x8, %[nr]\n\tmov x0, %[a0]\n\t"
			     "mov x1, %[a1]\n\tmov x2, %[a2]\n\tsvc #0\n"
			     "2: subs %[n], %[n], #1\n\tb.ne 1b\n3:\n\t"
			     "mov x29, x19\n\tmov %[ret], x0\n\t"
			     "adr %[b], 1b\n\tadr %[pc], 2b\n\tadr %[e], 3b\n\t"
			     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
			       [ret] "=r" (ret), [n] "+r" (n)
			     : [fp] "r" (w->fp), [nr] "r" (w->nr), [a0] "r" (w->arg[0]),
			       [a1] "r" (w->arg[1]), [a2] "r" (w->arg[2])
			     : "x0", "x1", "x2", "x8", "x19", "memory", "cc");
	}
#else
	b = 0;
	pc = 0;
	e = 0;
#endif
	w->begin = b;
	w->pc = pc;
	w->end = e;
	w->ret = ret;
}

/* Real functions with frames of their own, called, not jumped to. */
static DC_ATTR(noinline) void level3(struct work *w, bool misalign)
{
	w->ra[0] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	if (misalign)
		w->fp = (unsigned long)__builtin_frame_address(0) + 1;
	entries(w);
	asm volatile("" ::: "memory");
}

static DC_ATTR(noinline) void level2(struct work *w, bool misalign)
{
	w->ra[1] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	level3(w, misalign);
	asm volatile("" ::: "memory");
}

static DC_ATTR(noinline) void level1(struct work *w, bool misalign)
{
	w->ra[2] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	level2(w, misalign);
	asm volatile("" ::: "memory");
}

static DC_ATTR(noinline) void workload_main(struct work *w, bool misalign)
{
	level1(w, misalign);
	asm volatile("" ::: "memory");
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* One ring: the sampling event, and the side-band event that writes into it. */
struct ring {
	int fd, sb_fd;
	struct perf_event_mmap_page *pg;
	size_t len;
};

/* A sample (IP | TID | TIME | CALLCHAIN) or a deferred record, as read. */
struct rec {
	int ring;
	__u16 type, misc;
	__u32 pid, tid;
	__u64 ip, time, cookie, nr;
	const __u64 *ips;
};

/* The events of a run and what they wrote. */
struct session {
	struct ring ring[MAX_RINGS];
	int nr_rings;
	char *log;			/* [__u64 ring][record]... */
	char *tmp;			/* one ring's unread records */
	size_t log_len;
	__u64 lost, t_stop;
	struct rec *recs;
	size_t nr_recs;
};

enum { KERNEL_FP = 1, UNMAPPED_FP, MISALIGNED_FP, SELF_LOOP, TWO_FRAME_CYCLE };

/* What a run samples, and how. */
struct cfg {
	__u64 config;			/* PERF_TYPE_SOFTWARE; 0 is cpu-clock */
	__u64 period;			/* 0: PERIOD_NS */
	enum op op;
	bool defer;			/* defer_callchain on the sampling event */
	bool self_output;		/* defer_output on the sampling event itself */
	bool per_cpu;			/* pid -1, one event per CPU */
	bool pinned;			/* the workload on the first of those CPUs */
	int hostile;			/* the kind of frame pointer, or 0 */
};

FIXTURE(deferred)
{
	struct session s;
	char *area;
	size_t area_len;
	int zero_fd;
};

FIXTURE_VARIANT(deferred)
{
	struct cfg c;
};

FIXTURE_VARIANT_ADD(deferred, cpu_clock)
{
	.c = { .defer = true },
};

FIXTURE_VARIANT_ADD(deferred, cpu_clock_self_output)
{
	.c = { .defer = true, .self_output = true },
};

FIXTURE_VARIANT_ADD(deferred, page_faults)
{
	.c = { .config = PERF_COUNT_SW_PAGE_FAULTS, .period = 1, .op = OP_FAULTS,
	       .defer = true },
};

FIXTURE_VARIANT_ADD(deferred, one_entry_many_samples)
{
	.c = { .defer = true, .op = OP_LONG_READ },
};

FIXTURE_VARIANT_ADD(deferred, per_cpu)
{
	.c = { .defer = true, .per_cpu = true },
};

FIXTURE_VARIANT_ADD(deferred, per_cpu_self_output)
{
	.c = { .defer = true, .per_cpu = true, .self_output = true },
};

FIXTURE_VARIANT_ADD(deferred, per_cpu_pinned)
{
	.c = { .defer = true, .per_cpu = true, .pinned = true },
};

FIXTURE_VARIANT_ADD(deferred, no_defer)
{
	.c = { .defer = false },
};

FIXTURE_VARIANT_ADD(deferred, no_defer_per_cpu)
{
	.c = { .per_cpu = true },
};

FIXTURE_VARIANT_ADD(deferred, hostile_kernel_address)
{
	.c = { .defer = true, .hostile = KERNEL_FP },
};

FIXTURE_VARIANT_ADD(deferred, hostile_unmapped)
{
	.c = { .defer = true, .hostile = UNMAPPED_FP },
};

FIXTURE_VARIANT_ADD(deferred, hostile_misaligned)
{
	.c = { .defer = true, .hostile = MISALIGNED_FP },
};

FIXTURE_VARIANT_ADD(deferred, hostile_self_loop)
{
	.c = { .defer = true, .hostile = SELF_LOOP },
};

FIXTURE_VARIANT_ADD(deferred, hostile_two_frame_cycle)
{
	.c = { .defer = true, .hostile = TWO_FRAME_CYCLE },
};

static int perf_open(const struct cfg *v, __u64 config, pid_t pid,
		     int cpu, bool defer, bool output)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = config,
		.sample_period = config == PERF_COUNT_SW_DUMMY ? 0 : v->period ?: PERIOD_NS,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1,
		.disabled = 1,
		.use_clockid = 1,	/* the clock of now_ns() */
		.clockid = CLOCK_MONOTONIC,
		.defer_callchain = defer,
		.defer_output = output,
	};

	return syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * The sampling event of one ring and, unless it takes the deferred records
 * itself, a dummy event that asks for nothing but defer_output. The ring
 * holds all that a run writes, twice over, without being drained.
 */
static int ring_open(struct session *s, const struct cfg *v,
		     int cpu)
{
	struct ring *r = &s->ring[s->nr_rings];
	pid_t pid = v->per_cpu ? -1 : 0;
	long page = sysconf(_SC_PAGESIZE);

	r->sb_fd = -1;
	r->fd = perf_open(v, v->config, pid, cpu, v->defer, v->self_output);
	if (r->fd < 0)
		return -errno;
	s->nr_rings++;
	r->len = dr_ring_len(2 * RUN_NS / PERIOD_NS, REC_BYTES, page);
	r->pg = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->pg == MAP_FAILED) {
		r->pg = NULL;
		return -errno;
	}
	if (v->self_output)
		return 0;
	r->sb_fd = perf_open(v, PERF_COUNT_SW_DUMMY, pid, cpu, false, true);
	if (r->sb_fd < 0 || ioctl(r->sb_fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd))
		return -errno;
	return 0;
}

/*
 * Side-band events first on and last off: the record of a sample taken in
 * the ioctl() that switches a sampling event is written when it returns.
 */
static int enable(struct session *s, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	int pass, i, fd;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < s->nr_rings; i++) {
			fd = pass == on ? s->ring[i].fd : s->ring[i].sb_fd;
			if (fd >= 0 && ioctl(fd, req, 0))
				return -errno;
		}
	return 0;
}

/* Copy the unread records of every ring into the log, and free the space. */
static int drain(struct session *s)
{
	const struct perf_event_header *h;
	__u64 i;

	for (i = 0; i < (__u64)s->nr_rings; i++) {
		struct perf_event_mmap_page *pg = s->ring[i].pg;
		size_t len = dr_ring_copy(pg, s->tmp, s->ring[i].len), off;

		for (off = 0; (h = dr_record(s->tmp, len, off)); off += h->size) {
			if (s->log_len + sizeof(i) + h->size > LOG_SIZE)
				return -ENOSPC;
			memcpy(s->log + s->log_len, &i, sizeof(i));
			memcpy(s->log + s->log_len + sizeof(i), h, h->size);
			s->log_len += sizeof(i) + h->size;
		}
		__atomic_store_n(&pg->data_tail, pg->data_tail + off, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Parse the log: the samples and deferred records, in the order read. */
static int parse(struct session *s)
{
	const struct perf_event_header *h;
	const __u64 *p;
	size_t off, n = 0;
	struct rec *r;

	s->recs = calloc(s->log_len / sizeof(*h) + 1, sizeof(*r));
	if (!s->recs)
		return -ENOMEM;
	for (off = 0; off < s->log_len; off += sizeof(__u64) + h->size) {
		h = (const void *)(s->log + off + sizeof(__u64));
		p = (const void *)(h + 1);
		r = &s->recs[n];
		r->ring = *(const __u64 *)(s->log + off);
		r->type = h->type;
		r->misc = h->misc;
		switch (h->type) {
		case PERF_RECORD_SAMPLE:	/* ip, pid/tid, time, nr, ips */
			if (h->size != sizeof(*h) + (4 + p[3]) * 8)
				return -EBADMSG;
			r->ip = p[0];
			memcpy(&r->pid, &p[1], 8);
			r->time = p[2];
			r->nr = p[3];
			r->ips = &p[4];
			n++;
			break;
		case PERF_RECORD_CALLCHAIN_DEFERRED: /* cookie, nr, ips, pid/tid, time */
			if (h->size != sizeof(*h) + (4 + p[1]) * 8)
				return -EBADMSG;
			r->cookie = p[0];
			r->nr = p[1];
			r->ips = &p[2];
			memcpy(&r->pid, &p[2 + p[1]], 8);
			r->time = p[3 + p[1]];
			n++;
			break;
		case PERF_RECORD_LOST:
			s->lost += p[1];
			break;
		}
	}
	s->nr_recs = n;
	return 0;
}

/* What the records of one run show. */
struct tally {
	size_t samples, marked, in_place, records, workload, at_pc, idle;
	size_t excused, unanswered, orphans, max_per_cookie, max_user, bad;
	char why[256];
};

/* The samples a deferred record answers, and how many of them in user mode. */
struct answer {
	size_t samples, user;
};

static void __printf(2, 3) bad(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/*
 * A user callchain (deferred, or in place) that starts in the workload's
 * asm block goes on with the levels' return addresses, or with what the
 * hostile frame records lead to, and nothing else.
 */
static void check_user(const struct work *w, const __u64 *ips, __u64 nr, struct tally *t)
{
	unsigned long i;

	if (!nr || ips[0] < w->begin || ips[0] > w->end)
		return;
	t->workload++;
	t->at_pc += ips[0] == w->pc;
	if (w->op == OP_FAULTS && ips[0] != w->pc)
		bad(t, "fault at %#llx, the store is at %#lx", ips[0], w->pc);
	if (w->exp_nr) {
		if (nr != w->exp_nr)
			bad(t, "hostile fp: %llu ips, expected %lu", nr, w->exp_nr);
		for (i = 1; i < nr && i < w->exp_nr; i++)
			if (ips[i] != w->exp[i])
				bad(t, "hostile fp: ips[%lu] %#llx, expected %#lx",
				    i, ips[i], w->exp[i]);
		return;
	}
	if (nr < 4) {
		bad(t, "user stack from %#llx: %llu ips", ips[0], nr);
		return;
	}
	for (i = 0; i < 3; i++)
		if (ips[i + 1] != w->ra[i])
			bad(t, "ips[%lu] %#llx, the return address is %#lx",
			    i + 1, ips[i + 1], w->ra[i]);
}

static bool ours(const struct rec *r)
{
	static __u32 pid, tid;

	if (!pid) {
		pid = getpid();
		tid = syscall(SYS_gettid);
	}
	return r->pid == pid && r->tid == tid;
}

static int by_cookie(const void *a, const void *b)
{
	const struct rec *x = *(struct rec * const *)a, *y = *(struct rec * const *)b;

	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

/* The records of this task with @cookie: the first, and how many in @n. */
static struct rec **find(struct rec **d, size_t nr, __u64 cookie, size_t *n)
{
	size_t lo = 0, hi = nr, i;

	while (lo < hi) {
		i = (lo + hi) / 2;
		if (d[i]->cookie < cookie)
			lo = i + 1;
		else
			hi = i;
	}
	for (i = lo; i < nr && d[i]->cookie == cookie; i++)
		;
	*n = i - lo;
	return &d[lo];
}

/* One sample of this task: its callchain, and the record of its cookie. */
static void check_sample(struct session *s, const struct cfg *v,
			 const struct work *w, const struct rec *smp, struct rec **d,
			 size_t nr_d, struct answer *answered, __u64 *unanswered,
			 struct tally *t)
{
	bool user = (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	__u64 k = 0, cookie;
	struct rec **m;
	size_t n;

	t->samples++;
	if (v->pinned && smp->ring)
		bad(t, "a sample in ring %d, pinned to ring 0", smp->ring);
	if (!user) {
		if (!smp->nr || smp->ips[0] != PERF_CONTEXT_KERNEL) {
			bad(t, "kernel sample at %#llx: no PERF_CONTEXT_KERNEL", smp->ip);
			return;
		}
		for (k = 1; k < smp->nr && smp->ips[k] < PERF_CONTEXT_MAX; k++)
			;
	}
	if (v->defer && k + 2 == smp->nr && smp->ips[k] == PERF_CONTEXT_USER_DEFERRED) {
		t->marked++;
		cookie = smp->ips[k + 1];
		m = find(d, nr_d, cookie, &n);
		if (!n && v->self_output && smp->time >= s->t_stop)
			t->excused++;	/* the event was off when the record came */
		else if (!n && s->lost)
			unanswered[t->unanswered++] = cookie;
		else if (n != 1)
			bad(t, "cookie %#llx: %zu records", cookie, n);
		else if ((*m)->time < smp->time)
			bad(t, "the record of cookie %#llx precedes its sample", cookie);
		else if (user && (*m)->ips[0] != smp->ip)
			bad(t, "user sample at %#llx: deferred ips[0] %#llx", smp->ip,
			    (*m)->ips[0]);
		if (n) {
			answered[m - d].samples++;
			answered[m - d].user += user;
		}
		return;
	}
	/* In place: no deferral asked, or the record was already out. */
	if (v->defer && user)
		bad(t, "user sample at %#llx without a cookie", smp->ip);
	if (k + 1 >= smp->nr || smp->ips[k] != PERF_CONTEXT_USER) {
		bad(t, "sample at %#llx: no user callchain", smp->ip);
		return;
	}
	t->in_place += v->defer;
	if (user && smp->ips[k + 1] != smp->ip)
		bad(t, "user sample at %#llx: user stack from %#llx", smp->ip, smp->ips[k + 1]);
	/* perf_callchain_user() may walk hostile frames its own way */
	if (!v->hostile)
		check_user(w, &smp->ips[k + 1], smp->nr - k - 1, t);
}

static int by_value(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Check all the records of a run; -errno if it could not. */
static int check(struct session *s, const struct cfg *v,
		 const struct work *w, struct tally *t)
{
	struct rec **d = calloc(s->nr_recs + 1, sizeof(*d));
	struct answer *answered = calloc(s->nr_recs + 1, sizeof(*answered));
	__u64 *unanswered = calloc(s->nr_recs + 1, sizeof(*unanswered));
	size_t i, nr_d = 0, cookies = 0;
	struct rec *r;
	__u64 k;

	memset(t, 0, sizeof(*t));
	if (!d || !answered || !unanswered) {
		free(d);
		free(answered);
		free(unanswered);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr_recs; i++)
		if (s->recs[i].type == PERF_RECORD_CALLCHAIN_DEFERRED && ours(&s->recs[i]))
			d[nr_d++] = &s->recs[i];
	qsort(d, nr_d, sizeof(*d), by_cookie);

	for (i = 0; i < s->nr_recs; i++) {
		r = &s->recs[i];
		if (r->type != PERF_RECORD_SAMPLE)
			continue;
		if (ours(r)) {
			check_sample(s, v, w, r, d, nr_d, answered, unanswered, t);
		} else if (!r->pid) {
			/* The idle task has no user stack. */
			t->idle++;
			for (k = 0; k < r->nr; k++)
				if (r->ips[k] == PERF_CONTEXT_USER ||
				    r->ips[k] == PERF_CONTEXT_USER_DEFERRED)
					bad(t, "idle sample with user context %#llx", r->ips[k]);
		}
	}
	for (i = 0; i < nr_d; i++) {
		r = d[i];
		t->records++;
		if (!v->defer)
			bad(t, "a deferred record of this task without defer_callchain");
		if ((r->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
			bad(t, "deferred record misc %#x", r->misc);
		if (!r->nr)
			bad(t, "deferred record %#llx without ips", r->cookie);
		for (k = 0; k < r->nr; k++)
			if (r->ips[k] >= USER_TOP)
				bad(t, "deferred %#llx: ips[%llu] %#llx is no user address",
				    r->cookie, k, r->ips[k]);
		if (v->pinned && r->ring)
			bad(t, "a deferred record in ring %d, pinned to ring 0", r->ring);
		check_user(w, r->ips, r->nr, t);
		if (!answered[i].samples)
			t->orphans++;
		if (answered[i].samples > t->max_per_cookie)
			t->max_per_cookie = answered[i].samples;
		if (answered[i].user > t->max_user)
			t->max_user = answered[i].user;
	}
	/*
	 * Records the rings lost (a call of the workload outran the ring) are
	 * samples or deferred records: each cookie without its record and
	 * each record without a sample must be one of them, and few.
	 */
	qsort(unanswered, t->unanswered, sizeof(*unanswered), by_value);
	for (i = 0; i < t->unanswered; i++)
		cookies += !i || unanswered[i] != unanswered[i - 1];
	if (!s->lost && t->orphans)
		bad(t, "%zu deferred records answer no sample", t->orphans);
	if (s->lost && cookies + t->orphans > s->lost)
		bad(t, "%zu cookies without a record, %zu records without a sample, %llu lost",
		    cookies, t->orphans, s->lost);
	if (s->lost * 10 > s->nr_recs)
		bad(t, "%llu records lost, more than a tenth of the %zu read",
		    s->lost, s->nr_recs);
	free(d);
	free(answered);
	free(unanswered);
	return 0;
}

/*
 * An unmapped page above the stack pointer, so that the unwinder gets past
 * its check of the frame pointer against the stack pointer and reads it.
 */
static unsigned long unmapped_above(unsigned long sp)
{
	unsigned long start, end, top = 0, next = USER_TOP, addr;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (start <= sp && sp < end)
			top = end;
		else if (start > sp && start < next)
			next = start;
	}
	fclose(f);
	if (!top || next <= top + page)
		return 0;
	addr = (top + (next - top) / 2) & ~(page - 1);
	/* mincore() fails with ENOMEM on an unmapped page */
	if (mincore((void *)addr, page, &vec) == 0 || errno != ENOMEM)
		return 0;
	return addr;
}

FIXTURE_SETUP(deferred)
{
	const struct cfg *c = &variant->c;
	long page = sysconf(_SC_PAGESIZE);
	int cpus[MAX_RINGS], nr = 1, i, err = 0;

	self->zero_fd = -1;
	if (!HAVE_WORKLOAD)
		SKIP(return, "no workload for this architecture");
	if (geteuid())
		SKIP(return, "needs root: kernel callchains, per-CPU events");
	self->s.log = malloc(LOG_SIZE);
	self->s.tmp = malloc(dr_ring_len(2 * RUN_NS / PERIOD_NS, REC_BYTES, page));
	ASSERT_TRUE(self->s.log && self->s.tmp);
	cpus[0] = -1;
	if (c->per_cpu) {
		/* The first CPUs this task may run on, and the task kept there. */
		nr = dr_first_cpus(cpus, MAX_RINGS);
		ASSERT_LT(0, nr);
		ASSERT_EQ(0, dr_set_cpus(0, cpus, c->pinned ? 1 : nr));
	}
	for (i = 0; i < nr && !err; i++)
		err = ring_open(&self->s, c, cpus[i]);
	if (err == -EINVAL) {
		struct cfg plain = { .per_cpu = c->per_cpu };

		err = perf_open(&plain, 0, c->per_cpu ? -1 : 0, cpus[0], false, false);
		if (err >= 0 && !close(err))
			SKIP(return, "perf_event_open() rejects defer_callchain/defer_output");
		err = -EINVAL;
	}
	ASSERT_EQ(0, err) TH_LOG("opening the events: %s", strerror(-err));

	if (c->op == OP_FAULTS) {
		self->area_len = FAULT_AREA * page;
		self->area = mmap(NULL, self->area_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, self->area);
		madvise(self->area, self->area_len, MADV_NOHUGEPAGE);	/* a fault a page */
	}
	if (c->op == OP_LONG_READ) {
		self->area_len = READ_CHUNK;
		self->area = mmap(NULL, self->area_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ASSERT_NE(MAP_FAILED, self->area);
		self->zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, self->zero_fd);
	}
}

FIXTURE_TEARDOWN(deferred)
{
	int i;

	for (i = 0; i < self->s.nr_rings; i++) {
		if (self->s.ring[i].pg)
			munmap(self->s.ring[i].pg, self->s.ring[i].len);
		if (self->s.ring[i].sb_fd >= 0)
			close(self->s.ring[i].sb_fd);
		close(self->s.ring[i].fd);
	}
	if (self->area && self->area != MAP_FAILED)
		munmap(self->area, self->area_len);
	if (self->zero_fd >= 0)
		close(self->zero_fd);
	free(self->s.recs);
	free(self->s.tmp);
	free(self->s.log);
}

TEST_F(deferred, callchains)
{
	const struct cfg *c = &variant->c;
	struct work w = { .op = c->op, .count = SYSCALLS, .nr = __NR_getppid };
	struct iovec iov[READ_IOVS];
	unsigned long calls = 0, max_calls = ~0UL;
	struct { unsigned long fp, ra; } frames[2];	/* frame records */
	struct timespec idle = { .tv_nsec = 20000000 };
	struct tally t;
	__u64 deadline;
	int i;

	if (c->op == OP_LONG_READ) {
		for (i = 0; i < READ_IOVS; i++) {
			iov[i].iov_base = self->area;
			iov[i].iov_len = self->area_len;
		}
		w.count = 1;
		w.nr = __NR_readv;
		w.arg[0] = self->zero_fd;
		w.arg[1] = (unsigned long)iov;
		w.arg[2] = READ_IOVS;
	}
	if (c->op == OP_FAULTS) {
		w.count = FAULT_PAGES;
		w.pages = self->area;
		w.step = sysconf(_SC_PAGESIZE);
		max_calls = FAULT_AREA / FAULT_PAGES;
	}
	/*
	 * The unwinder reads a frame record at fp: the return address at
	 * fp + 8, the next fp at fp. It stops where fp is below sp or
	 * misaligned, does not go up, or cannot be read. The frames here
	 * lie above level3()'s sp.
	 */
	w.exp_nr = c->hostile ? 1 : 0;
	switch (c->hostile) {
	case KERNEL_FP:
		w.fp = KERNEL_ADDR;
		break;
	case UNMAPPED_FP:
		w.fp = unmapped_above((unsigned long)frames);
		if (!w.fp)
			SKIP(return, "no unmapped page found above the stack");
		break;
	case SELF_LOOP:
		frames[0].fp = (unsigned long)&frames[0];
		frames[0].ra = (unsigned long)level1;
		w.fp = (unsigned long)&frames[0];
		w.exp[1] = frames[0].ra;
		w.exp_nr = 2;
		break;
	case TWO_FRAME_CYCLE:
		frames[0].fp = (unsigned long)&frames[1];
		frames[0].ra = (unsigned long)level1;
		frames[1].fp = (unsigned long)&frames[0];
		frames[1].ra = (unsigned long)level2;
		w.fp = (unsigned long)&frames[0];
		w.exp[1] = frames[0].ra;
		w.exp[2] = frames[1].ra;
		w.exp_nr = 3;
		break;
	}

	ASSERT_EQ(0, enable(&self->s, true));
	deadline = now_ns() + RUN_NS;
	do {
		workload_main(&w, c->hostile == MISALIGNED_FP);
		calls++;
		if (c->op == OP_LONG_READ)
			ASSERT_LT(0, w.ret) TH_LOG("readv(): %ld", w.ret);
		w.pages += w.count * w.step;
		ASSERT_EQ(0, drain(&self->s));
	} while (calls < max_calls && now_ns() < deadline);
	if (c->per_cpu)
		nanosleep(&idle, NULL);	/* for the idle task to be sampled */
	self->s.t_stop = now_ns();
	ASSERT_EQ(0, enable(&self->s, false));
	ASSERT_EQ(0, drain(&self->s));
	ASSERT_EQ(0, parse(&self->s));
	ASSERT_EQ(0, check(&self->s, c, &w, &t));

	TH_LOG("%d ring(s): %zu records read, %llu lost", self->s.nr_rings, self->s.nr_recs,
	       self->s.lost);
	TH_LOG("%zu samples: %zu with a cookie, %zu in place; %zu of the idle task",
	       t.samples, t.marked, t.in_place, t.idle);
	TH_LOG("%zu deferred records, most samples on one %zu", t.records, t.max_per_cookie);
	TH_LOG("cookies without a record: %zu after the stop, %zu with records lost; orphans %zu",
	       t.excused, t.unanswered, t.orphans);
	TH_LOG("user stacks in the workload %zu, at its pc %zu", t.workload, t.at_pc);
	if (c->defer && !t.marked && t.samples)
		SKIP(return, DR_NO_UNWINDER);
	EXPECT_EQ(0, t.bad) TH_LOG("%zu problems, first: %s", t.bad, t.why);
	/* The checks above are only as good as what they saw. */
	ASSERT_LT(0, t.samples);
	ASSERT_LT(0, t.workload) TH_LOG("no user stack from the workload");
	EXPECT_LT(0, t.at_pc) TH_LOG("no user stack from a kernel entry of the workload");
	if (c->defer)
		EXPECT_LT(0, t.records);
	/* One fault, one kernel entry, one cookie (the samples in user mode) */
	if (c->op == OP_FAULTS)
		EXPECT_EQ(1, t.max_user);
	/* One readv(), one kernel entry, many samples */
	if (c->op == OP_LONG_READ)
		EXPECT_LT(1, t.max_per_cookie);
	if (c->per_cpu)
		EXPECT_LT(0, t.idle);
}

TEST_HARNESS_MAIN
