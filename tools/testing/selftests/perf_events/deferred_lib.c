// SPDX-License-Identifier: GPL-2.0
/*
 * The workload, the perf sessions and the checks that deferred_callchain
 * and deferred_hostile share (deferred_callchain.h).
 */
#define _GNU_SOURCE

#include "deferred_callchain.h"

#if defined(__x86_64__)

static inline DC_ALWAYS_INLINE void dc_syscall_loop(struct dc_work *w)
{
	unsigned long n = w->count, b, pc, e;
	long ret;

	asm volatile("1:\n\t"
		     "mov %[nr], %%rax\n\t"
		     "mov %[a0], %%rdi\n\t"
		     "mov %[a1], %%rsi\n\t"
		     "mov %[a2], %%rdx\n\t"
		     "syscall\n\t"
		     "2:\n\t"
		     "dec %[n]\n\t"
		     "jnz 1b\n\t"
		     "3:\n\t"
		     "mov %%rax, %[ret]\n\t"
		     "lea 1b(%%rip), %[b]\n\t"
		     "lea 2b(%%rip), %[pc]\n\t"
		     "lea 3b(%%rip), %[e]\n\t"
		     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
		       [ret] "=r" (ret), [n] "+r" (n)
		     : [nr] "r" (w->nr), [a0] "r" (w->arg[0]),
		       [a1] "r" (w->arg[1]), [a2] "r" (w->arg[2])
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "memory", "cc");
	w->begin = b;
	w->pc = pc;
	w->end = e;
	w->ret = ret;
}

/*
 * The frame pointer is hostile only inside this asm block: it is saved in
 * r12, replaced, and restored before the compiler can use it again.
 */
static inline DC_ALWAYS_INLINE void dc_hostile_loop(struct dc_work *w, unsigned long fp)
{
	unsigned long n = w->count, b, pc, e;

	asm volatile("mov %%rbp, %%r12\n\t"
		     "mov %[fp], %%rbp\n\t"
		     "1:\n\t"
		     "mov %[nr], %%eax\n\t"
		     "syscall\n\t"
		     "2:\n\t"
		     "dec %[n]\n\t"
		     "jnz 1b\n\t"
		     "3:\n\t"
		     "mov %%r12, %%rbp\n\t"
		     "lea 1b(%%rip), %[b]\n\t"
		     "lea 2b(%%rip), %[pc]\n\t"
		     "lea 3b(%%rip), %[e]\n\t"
		     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e), [n] "+r" (n)
		     : [fp] "r" (fp), [nr] "i" (__NR_getppid)
		     : "rax", "rcx", "r11", "r12", "memory", "cc");
	w->begin = b;
	w->pc = pc;
	w->end = e;
}

static inline DC_ALWAYS_INLINE void dc_fault_loop(struct dc_work *w)
{
	unsigned long n = w->count, b, e;
	char *p = w->pages;

	asm volatile("1:\n\t"
		     "movb $1, (%[p])\n\t"
		     "add %[step], %[p]\n\t"
		     "dec %[n]\n\t"
		     "jnz 1b\n\t"
		     "2:\n\t"
		     "lea 1b(%%rip), %[b]\n\t"
		     "lea 2b(%%rip), %[e]\n\t"
		     : [b] "=r" (b), [e] "=r" (e), [p] "+r" (p), [n] "+r" (n)
		     : [step] "r" (w->step)
		     : "memory", "cc");
	w->begin = b;
	w->pc = b;
	w->end = e;
}

#elif defined(__aarch64__)

static inline DC_ALWAYS_INLINE void dc_syscall_loop(struct dc_work *w)
{
	unsigned long n = w->count, b, pc, e;
	long ret;

	asm volatile("1:\n\t"
		     "mov x8, %[nr]\n\t"
		     "mov x0, %[a0]\n\t"
		     "mov x1, %[a1]\n\t"
		     "mov x2, %[a2]\n\t"
		     "svc #0\n\t"
		     "2:\n\t"
		     "subs %[n], %[n], #1\n\t"
		     "b.ne 1b\n\t"
		     "3:\n\t"
		     "mov %[ret], x0\n\t"
		     "adr %[b], 1b\n\t"
		     "adr %[pc], 2b\n\t"
		     "adr %[e], 3b\n\t"
		     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e),
		       [ret] "=r" (ret), [n] "+r" (n)
		     : [nr] "r" (w->nr), [a0] "r" (w->arg[0]),
		       [a1] "r" (w->arg[1]), [a2] "r" (w->arg[2])
		     : "x0", "x1", "x2", "x8", "memory", "cc");
	w->begin = b;
	w->pc = pc;
	w->end = e;
	w->ret = ret;
}

/*
 * The frame pointer is hostile only inside this asm block: it is saved in
 * x19, replaced, and restored before the compiler can use it again.
 */
static inline DC_ALWAYS_INLINE void dc_hostile_loop(struct dc_work *w, unsigned long fp)
{
	unsigned long n = w->count, b, pc, e;

	asm volatile("mov x19, x29\n\t"
		     "mov x29, %[fp]\n\t"
		     "1:\n\t"
		     "mov x8, %[nr]\n\t"
		     "svc #0\n\t"
		     "2:\n\t"
		     "subs %[n], %[n], #1\n\t"
		     "b.ne 1b\n\t"
		     "3:\n\t"
		     "mov x29, x19\n\t"
		     "adr %[b], 1b\n\t"
		     "adr %[pc], 2b\n\t"
		     "adr %[e], 3b\n\t"
		     : [b] "=r" (b), [pc] "=r" (pc), [e] "=r" (e), [n] "+r" (n)
		     : [fp] "r" (fp), [nr] "i" (__NR_getppid)
		     : "x0", "x8", "x19", "memory", "cc");
	w->begin = b;
	w->pc = pc;
	w->end = e;
}

static inline DC_ALWAYS_INLINE void dc_fault_loop(struct dc_work *w)
{
	unsigned long n = w->count, b, e;
	char *p = w->pages;

	asm volatile("1:\n\t"
		     "strb wzr, [%[p]]\n\t"
		     "add %[p], %[p], %[step]\n\t"
		     "subs %[n], %[n], #1\n\t"
		     "b.ne 1b\n\t"
		     "2:\n\t"
		     "adr %[b], 1b\n\t"
		     "adr %[e], 2b\n\t"
		     : [b] "=r" (b), [e] "=r" (e), [p] "+r" (p), [n] "+r" (n)
		     : [step] "r" (w->step)
		     : "memory", "cc");
	w->begin = b;
	w->pc = b;
	w->end = e;
}

#else

static void dc_syscall_loop(struct dc_work *w)
{
}

static void dc_hostile_loop(struct dc_work *w, unsigned long fp)
{
}

static void dc_fault_loop(struct dc_work *w)
{
}

#endif

/*
 * The call chain of the workload.  noinline and the empty asm statements
 * keep every level a real function with its own frame, called (not jumped
 * to) from the level above.
 */
static DC_NOINLINE long level3(struct dc_work *w)
{
	w->ra[0] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	asm volatile("" ::: "memory");

	switch (w->op) {
	case DC_OP_SYSCALLS:
	case DC_OP_LONG_READ:
		dc_syscall_loop(w);
		break;
	case DC_OP_FAULTS:
		dc_fault_loop(w);
		break;
	case DC_OP_HOSTILE:
		dc_hostile_loop(w, w->misalign ?
				(unsigned long)__builtin_frame_address(0) + 1 :
				w->bad_fp);
		break;
	}
	return w->ret;
}

DC_NOINLINE long level2(struct dc_work *w)
{
	long ret;

	w->ra[1] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	ret = level3(w);
	asm volatile("" ::: "memory");
	return ret;
}

DC_NOINLINE long level1(struct dc_work *w)
{
	long ret;

	w->ra[2] = dr_strip_ra((unsigned long)__builtin_return_address(0));
	ret = level2(w);
	asm volatile("" ::: "memory");
	return ret;
}

static DC_NOINLINE long workload_main(struct dc_work *w)
{
	long ret;

	ret = level1(w);
	asm volatile("" ::: "memory");
	return ret;
}

static __u64 dc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int dc_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

static void dc_attr(struct perf_event_attr *attr, __u32 type, __u64 config,
		    __u64 period)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->sample_period = period;
	attr->sample_type = DC_SAMPLE_TYPE;
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->exclude_callchain_kernel = 0;
	/* Same clock as clock_gettime(), see dc_session.t_stop. */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

void dc_session_init(struct dc_session *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < DC_MAX_RINGS; i++) {
		s->ring[i].fd = -1;
		s->ring[i].sb_fd = -1;
	}
}

/*
 * Open the sampling event of one ring, its buffer and, unless the sampling
 * event outputs the deferred callchains itself, a dummy side-band event
 * with defer_output that writes into the same buffer.  Neither asks for
 * any other side-band record: defer_output alone must be enough, for
 * per-task and per-CPU events alike.
 *
 * Returns 0, -EOPNOTSUPP when the kernel rejects defer_callchain but takes
 * the same event without it, or another -errno.
 */
static int dc_ring_open(struct dc_session *s, const struct dc_config *c,
			int cpu, unsigned int pages)
{
	struct dc_ring *r = &s->ring[s->nr_rings];
	size_t page_size = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	int err, fd;

	dc_attr(&attr, c->type, c->config, c->period);
	attr.defer_callchain = c->defer;
	attr.defer_output = c->self_output;
	r->cpu = cpu;
	r->fd = dc_perf_open(&attr, c->pid, cpu);
	if (r->fd < 0) {
		err = -errno;
		if (err == -EINVAL && (c->defer || c->self_output)) {
			attr.defer_callchain = 0;
			attr.defer_output = 0;
			r->fd = dc_perf_open(&attr, c->pid, cpu);
			if (r->fd >= 0) {
				close(r->fd);
				r->fd = -1;
				return -EOPNOTSUPP;
			}
		}
		return err;
	}
	s->nr_rings++;

	r->map_len = (pages + 1) * page_size;
	r->pg = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     r->fd, 0);
	if (r->pg == MAP_FAILED) {
		r->pg = NULL;
		return -errno;
	}
	r->data = (char *)r->pg + (r->pg->data_offset ?: page_size);
	r->data_size = r->pg->data_size ?: pages * page_size;

	if (c->self_output)
		return 0;

	dc_attr(&attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0);
	attr.defer_output = 1;
	r->sb_fd = dc_perf_open(&attr, c->pid, cpu);
	if (r->sb_fd < 0) {
		err = -errno;
		attr.defer_output = 0;
		if (err == -EINVAL) {
			fd = dc_perf_open(&attr, c->pid, cpu);
			if (fd >= 0) {
				close(fd);
				return -EOPNOTSUPP;
			}
		}
		return err;
	}
	if (ioctl(r->sb_fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd))
		return -errno;
	return 0;
}

void dc_session_close(struct dc_session *s)
{
	int i;

	for (i = 0; i < s->nr_rings; i++) {
		if (s->ring[i].pg)
			munmap(s->ring[i].pg, s->ring[i].map_len);
		if (s->ring[i].sb_fd >= 0)
			close(s->ring[i].sb_fd);
		if (s->ring[i].fd >= 0)
			close(s->ring[i].fd);
	}
	s->nr_rings = 0;
	if (s->log)
		munmap(s->log, DC_LOG_SIZE);
	s->log = NULL;
}

/*
 * A task ring holds all that a run writes, twice over, without being
 * drained: a debug kernel can spend a long time in one call of the
 * workload, between two drains.
 */
static unsigned int dc_task_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return dr_ring_len(2 * DC_RUN_NS / DC_PERIOD_NS, DC_REC_BYTES, page) / page - 1;
}

/*
 * The first DC_MAX_RINGS CPUs this task may run on, as many as there are,
 * in @cpus; and the task kept on them. A per-CPU session watches those,
 * so its rings and their memory do not grow with the machine.
 */
static int dc_pick_cpus(int *cpus)
{
	int nr, err;

	nr = dr_first_cpus(cpus, DC_MAX_RINGS);
	if (nr < 0)
		return nr;
	err = dr_set_cpus(0, cpus, nr);
	return err ? err : nr;
}

int dc_session_open(struct dc_session *s, const struct dc_config *c,
		    bool per_cpu)
{
	unsigned int pages = dc_task_pages();
	int cpus[DC_MAX_RINGS];
	int i, nr, err;

	s->log = mmap(NULL, DC_LOG_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->log == MAP_FAILED) {
		s->log = NULL;
		return -errno;
	}
	if (!per_cpu)
		return dc_ring_open(s, c, -1, pages);

	/* The workload can only run, and be sampled, on these CPUs. */
	nr = dc_pick_cpus(cpus);
	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++) {
		err = dc_ring_open(s, c, cpus[i], pages);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Side-band events are enabled first and disabled last: the deferred
 * record of a sample taken inside the ioctl() that switches a sampling
 * event is written when that ioctl() returns to user space.
 */
static int dc_session_enable(struct dc_session *s, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	int pass, i, fd;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < s->nr_rings; i++) {
			fd = pass == on ? s->ring[i].fd : s->ring[i].sb_fd;
			if (fd >= 0 && ioctl(fd, req, 0))
				return -errno;
		}
	}
	return 0;
}

static void dc_ring_copy(const struct dc_ring *r, __u64 off, void *dst,
			 size_t len)
{
	size_t pos = off % r->data_size;
	size_t first = r->data_size - pos;

	if (first > len)
		first = len;
	memcpy(dst, r->data + pos, first);
	memcpy((char *)dst + first, r->data, len - first);
}

/* Copy all complete records out of one ring and hand the space back. */
static int dc_ring_drain(struct dc_session *s, int idx)
{
	struct dc_ring *r = &s->ring[idx];
	struct perf_event_header hdr;
	struct dc_logrec *rec;
	__u64 head, tail;

	head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	tail = r->pg->data_tail;
	while (tail < head) {
		dc_ring_copy(r, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail ||
		    hdr.size % sizeof(__u64))
			return -EBADMSG;
		if (s->log_len + sizeof(*rec) + hdr.size > DC_LOG_SIZE)
			return -ENOSPC;
		rec = (struct dc_logrec *)(s->log + s->log_len);
		rec->ring = idx;
		rec->size = hdr.size;
		dc_ring_copy(r, tail, rec + 1, hdr.size);
		s->log_len += sizeof(*rec) + hdr.size;
		s->bytes += hdr.size;
		tail += hdr.size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

static void dc_drain_all(struct dc_session *s)
{
	int i, err;

	for (i = 0; i < s->nr_rings; i++) {
		err = dc_ring_drain(s, i);
		if (err && !s->err)
			s->err = err;
	}
}

/* Note the first error of a session and what it was. */
static void __printf(3, 4) dc_fail(struct dc_session *s, int err,
				   const char *fmt, ...)
{
	va_list ap;

	if (s->err && s->why[0])
		return;
	s->err = err;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/*
 * Run the workload over and over for DC_RUN_NS, at most max_calls times,
 * with the events enabled, and collect the records.  Returns the number of
 * calls of workload_main(); s->err and s->why say what went wrong.
 */
unsigned long dc_run(struct dc_session *s, struct dc_work *w,
		     unsigned long max_calls, bool idle_tail)
{
	struct timespec pause = { .tv_nsec = 20000000 };
	unsigned long calls = 0;
	__u64 deadline;

	if (dc_session_enable(s, true)) {
		dc_fail(s, -errno, "enabling the events: %s", strerror(errno));
		return 0;
	}
	deadline = dc_now() + DC_RUN_NS;
	while (calls < max_calls) {
		workload_main(w);
		calls++;
		if (w->op == DC_OP_LONG_READ && w->ret <= 0)
			dc_fail(s, -EIO, "readv() returned %ld", w->ret);
		if (w->op == DC_OP_FAULTS)
			w->pages += w->count * w->step;
		dc_drain_all(s);
		if (s->err || dc_now() >= deadline)
			break;
	}
	/* Let the idle task run, and be sampled by per-CPU events. */
	if (idle_tail)
		nanosleep(&pause, NULL);
	s->t_stop = dc_now();
	if (dc_session_enable(s, false))
		dc_fail(s, -errno, "disabling the events: %s", strerror(errno));
	dc_drain_all(s);
	if (s->err)
		dc_fail(s, s->err, "reading the ring buffer: %s",
			strerror(-s->err));
	ksft_print_msg("read %llu KiB through %d ring(s) of %llu KiB\n",
		       s->bytes >> 10, s->nr_rings, s->ring[0].data_size >> 10);
	return calls;
}

/* A record whose size does not match the ips it says it holds. */
static bool dc_bad_size(const struct perf_event_header *hdr, __u64 nr)
{
	return hdr->size < sizeof(*hdr) + 4 * sizeof(__u64) ||
	       hdr->size != sizeof(*hdr) + (4 + nr) * sizeof(__u64);
}

/*
 * The samples and deferred records the session read, in the order they
 * were read. Returns 0, -ENOMEM, or -EBADMSG for a malformed record.
 */
static int dc_parse(struct dc_session *s, struct dc_records *out)
{
	size_t off, nr_samples = 0, nr_deferred = 0;
	const struct perf_event_header *hdr;
	const struct dc_logrec *rec;
	const __u32 *id;
	const __u64 *p;
	int pass;

	memset(out, 0, sizeof(*out));
	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			out->samples = calloc(nr_samples + 1, sizeof(*out->samples));
			out->deferred = calloc(nr_deferred + 1,
					       sizeof(*out->deferred));
			if (!out->samples || !out->deferred)
				return -ENOMEM;
		}
		nr_samples = 0;
		nr_deferred = 0;
		for (off = 0; off < s->log_len; off += sizeof(*rec) + rec->size) {
			rec = (const struct dc_logrec *)(s->log + off);
			hdr = (const struct perf_event_header *)(rec + 1);
			p = (const __u64 *)(hdr + 1);

			switch (hdr->type) {
			case PERF_RECORD_SAMPLE: {
				struct dc_sample *smp = &out->samples[nr_samples++];

				if (!pass)
					break;
				/* ip, pid/tid, time, nr, ips[nr] */
				if (dc_bad_size(hdr, p[3]))
					return -EBADMSG;
				id = (const __u32 *)&p[1];
				smp->ip = p[0];
				smp->pid = id[0];
				smp->tid = id[1];
				smp->time = p[2];
				smp->nr = p[3];
				smp->chain = &p[4];
				smp->misc = hdr->misc;
				smp->ring = rec->ring;
				break;
			}
			case PERF_RECORD_CALLCHAIN_DEFERRED: {
				struct dc_deferred *d = &out->deferred[nr_deferred++];

				if (!pass)
					break;
				/* cookie, nr, ips[nr], sample_id: pid/tid, time */
				if (dc_bad_size(hdr, p[1]))
					return -EBADMSG;
				id = (const __u32 *)&p[2 + p[1]];
				d->cookie = p[0];
				d->nr = p[1];
				d->ips = &p[2];
				d->pid = id[0];
				d->tid = id[1];
				d->time = p[3 + p[1]];
				d->misc = hdr->misc;
				d->ring = rec->ring;
				break;
			}
			case PERF_RECORD_LOST:
				if (pass)
					out->lost += p[1];
				break;
			case PERF_RECORD_THROTTLE:
				if (pass)
					out->throttled++;
				break;
			default:
				break;
			}
		}
	}
	out->nr_samples = nr_samples;
	out->nr_deferred = nr_deferred;
	return 0;
}

static void dc_records_free(struct dc_records *r)
{
	free(r->samples);
	free(r->deferred);
}

static int dc_cmp_cookie(const void *a, const void *b)
{
	const struct dc_deferred *x = a, *y = b;

	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

static int dc_cmp_u64(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The value that occurs most often in v[nr] (sorts v), 0 if nr is 0. */
static __u64 dc_most_frequent(__u64 *v, size_t nr)
{
	size_t i, j, best = 0;
	__u64 val = 0;

	qsort(v, nr, sizeof(*v), dc_cmp_u64);
	for (i = 0; i < nr; i = j) {
		for (j = i + 1; j < nr && v[j] == v[i]; j++)
			;
		if (j - i > best) {
			best = j - i;
			val = v[i];
		}
	}
	return val;
}

/* Deferred records of our task with this cookie: index of the first one. */
static size_t dc_find_cookie(const struct dc_deferred *d, size_t nr,
			     __u64 cookie, size_t *count)
{
	size_t lo = 0, hi = nr, i;

	while (lo < hi) {
		i = lo + (hi - lo) / 2;
		if (d[i].cookie < cookie)
			lo = i + 1;
		else
			hi = i;
	}
	for (i = lo; i < nr && d[i].cookie == cookie; i++)
		;
	*count = i - lo;
	return lo;
}

static bool dc_is_context(__u64 ip)
{
	return ip >= (__u64)PERF_CONTEXT_MAX;
}

/* Is pid a kernel thread (idle task, kthread)?  1, 0, or -1: unknown. */
static int dc_is_kthread(pid_t pid)
{
	static struct {
		pid_t pid;
		int kthread;
	} cache[256];
	static unsigned int nr_cache;
	unsigned long flags;
	char path[64], buf[512], *p;
	unsigned int i;
	int ret = -1;
	size_t len;
	FILE *f;

	if (!pid)
		return 1;
	for (i = 0; i < nr_cache; i++)
		if (cache[i].pid == pid)
			return cache[i].kthread;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f) {
		len = fread(buf, 1, sizeof(buf) - 1, f);
		buf[len] = '\0';
		fclose(f);
		/* pid (comm) state ppid pgrp session tty_nr tpgid flags */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu",
				&flags) == 1)
			ret = !!(flags & DC_PF_KTHREAD);
	}
	if (nr_cache < ARRAY_SIZE(cache)) {
		cache[nr_cache].pid = pid;
		cache[nr_cache].kthread = ret;
		nr_cache++;
	}
	return ret;
}

/* Count a problem; keep the description of the first one. */
static void __printf(2, 3) dc_bad(struct dc_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
}

/*
 * A user callchain (deferred, or after PERF_CONTEXT_USER) whose first ip
 * lies in the workload's asm block must continue with the return addresses
 * the levels saw; with a hostile frame pointer it must be exactly what the
 * frame records lead to.
 */
static void dc_check_user(const struct dc_work *w, const __u64 *ips,
			  __u64 nr, struct dc_result *res)
{
	unsigned long i;

	if (!nr || ips[0] < w->begin || ips[0] > w->end)
		return;
	res->workload++;
	if (ips[0] == w->pc)
		res->at_pc++;
	else if (w->op == DC_OP_FAULTS)
		dc_bad(res, "fault at %#llx, the store is at %#lx",
		       ips[0], w->pc);

	if (w->op == DC_OP_HOSTILE) {
		if (nr != w->exp_nr) {
			dc_bad(res, "hostile fp: %llu ips, expected %lu",
			       nr, w->exp_nr);
			return;
		}
		for (i = 1; i < nr; i++)
			if (ips[i] != w->exp[i])
				dc_bad(res, "hostile fp: ips[%lu] %#llx, expected %#lx",
				       i, ips[i], w->exp[i]);
		return;
	}

	if (nr < 4) {
		dc_bad(res, "user stack from %#llx has only %llu ips",
		       ips[0], nr);
		return;
	}
	if (ips[1] != w->ra[0])
		dc_bad(res, "ips[1] %#llx is not the return address into level2 %#lx",
		       ips[1], w->ra[0]);
	if (ips[2] != w->ra[1])
		dc_bad(res, "ips[2] %#llx is not the return address into level1 %#lx",
		       ips[2], w->ra[1]);
	if (ips[3] != w->ra[2])
		dc_bad(res, "ips[3] %#llx is not the return address into workload_main %#lx",
		       ips[3], w->ra[2]);
}

/* Check the callchain of one sample of our task. */
static void dc_check_sample(const struct dc_expect *e,
			    const struct dc_sample *smp, struct dc_result *res)
{
	bool user_mode = (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_USER;
	const __u64 *c = smp->chain;
	__u64 i, nr = smp->nr, user = nr;

	res->samples++;
	res->user_samples += user_mode;

	/* A kernel part: PERF_CONTEXT_KERNEL, ips; only if in the kernel. */
	i = 0;
	if (!user_mode) {
		if (!nr || c[0] != PERF_CONTEXT_KERNEL) {
			dc_bad(res, "kernel sample at %#llx: no PERF_CONTEXT_KERNEL",
			       smp->ip);
			return;
		}
		for (i = 1; i < nr && !dc_is_context(c[i]); i++)
			;
	}
	if (i < nr)
		user = i;

	/*
	 * In the kernel after the entry's record was written (in the task
	 * work that wrote it, on the way out), the user stack comes in place:
	 * no cookie that the record, already out, could answer.
	 */
	if (e->defer && !user_mode && user < nr && c[user] == PERF_CONTEXT_USER) {
		res->in_place++;
		/*
		 * perf_callchain_user() walked it, not the deferred unwinder:
		 * where the frame records are broken, the two may differ.
		 */
		if (e->w->op == DC_OP_HOSTILE)
			return;
	} else if (e->defer) {
		/* Exactly PERF_CONTEXT_USER_DEFERRED, cookie: nothing after */
		if (nr - user != 2 || c[user] != PERF_CONTEXT_USER_DEFERRED) {
			dc_bad(res, "sample at %#llx: no USER_DEFERRED, cookie at the end",
			       smp->ip);
			return;
		}
		if (!c[user + 1])
			dc_bad(res, "sample at %#llx: cookie 0", smp->ip);
		return;
	}

	/* PERF_CONTEXT_USER and the user stack walked right away */
	if (user + 1 >= nr || c[user] != PERF_CONTEXT_USER) {
		dc_bad(res, "sample at %#llx: no PERF_CONTEXT_USER and user ips",
		       smp->ip);
		return;
	}
	for (i = user + 1; i < nr; i++)
		if (dc_is_context(c[i]))
			dc_bad(res, "sample at %#llx: context %#llx in the user part",
			       smp->ip, c[i]);
	if (user_mode && c[user + 1] != smp->ip)
		dc_bad(res, "user sample at %#llx: user stack starts at %#llx",
		       smp->ip, c[user + 1]);
	dc_check_user(e->w, &c[user + 1], nr - user - 1, res);
}

/* A kernel thread has no user stack: no user context of either kind. */
static void dc_check_kthread(const struct dc_sample *smp, struct dc_result *res)
{
	__u64 i;

	res->kthread_samples++;
	for (i = 0; i < smp->nr; i++)
		if (smp->chain[i] == PERF_CONTEXT_USER ||
		    smp->chain[i] == PERF_CONTEXT_USER_DEFERRED)
			dc_bad(res, "kernel thread %u: user context %#llx in its callchain",
			       smp->tid, smp->chain[i]);
}

/* The first (up to 4) ips of two user stacks agree. */
static bool dc_same_ips(const __u64 *a, __u64 na, const __u64 *b, __u64 nb)
{
	__u64 i;

	for (i = 0; i < na && i < nb && i < 4; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* A user stack in place and a deferred record agree. */
static bool dc_same_stack(const __u64 *c, __u64 n, const struct dc_deferred *d)
{
	return d && n && d->nr && dc_same_ips(c, n, d->ips, d->nr);
}

/*
 * A sample with its user stack in place although it asked for deferral was
 * taken once the callback of its entry had started: its entry's record,
 * written just before the sample or while it was taken, holds the same
 * user stack.
 */
static void dc_check_in_place(const struct dc_deferred *ours, size_t nr_ours,
			      const struct dc_sample *smp, struct dc_result *res)
{
	const struct dc_deferred *before = NULL, *after = NULL;
	const __u64 *c = smp->chain;
	__u64 i, n;
	size_t k;

	for (i = 0; i < smp->nr && c[i] != PERF_CONTEXT_USER; i++)
		;
	if (i + 1 >= smp->nr) {
		dc_bad(res, "sample at %#llx: PERF_CONTEXT_USER without ips",
		       smp->ip);
		return;
	}
	c += i + 1;
	n = smp->nr - i - 1;
	for (k = 0; k < nr_ours; k++) {
		if (ours[k].time <= smp->time) {
			if (!before || ours[k].time > before->time)
				before = &ours[k];
		} else if (!after || ours[k].time < after->time) {
			after = &ours[k];
		}
	}
	if (!dc_same_stack(c, n, before) && !dc_same_stack(c, n, after))
		dc_bad(res, "sample at %#llx: in place from %#llx, records from %#llx, %#llx",
		       smp->ip, c[0], before ? before->ips[0] : 0,
		       after ? after->ips[0] : 0);
}

static int dc_state_init(struct dc_state *st, const struct dc_expect *e,
			 const struct dc_records *recs)
{
	__u32 pid = getpid(), tid = syscall(SYS_gettid);
	size_t i;

	memset(st, 0, sizeof(*st));
	st->e = e;
	st->ours = calloc(recs->nr_deferred + 1, sizeof(*st->ours));
	st->tally = calloc(recs->nr_deferred + 1, sizeof(*st->tally));
	st->cand = calloc(recs->nr_samples + 1, sizeof(*st->cand));
	st->unanswered = calloc(recs->nr_samples + 1, sizeof(*st->unanswered));
	if (!st->ours || !st->tally || !st->cand || !st->unanswered)
		return -ENOMEM;
	st->lost = recs->lost;
	for (i = 0; i < recs->nr_deferred; i++)
		if (recs->deferred[i].pid == pid && recs->deferred[i].tid == tid)
			st->ours[st->nr_ours++] = recs->deferred[i];
	qsort(st->ours, st->nr_ours, sizeof(*st->ours), dc_cmp_cookie);
	return 0;
}

static void dc_state_free(struct dc_state *st)
{
	free(st->unanswered);
	free(st->cand);
	free(st->tally);
	free(st->ours);
}

/* Each of our records: user ips only, in the pinned ring, the levels' ras. */
static void dc_check_records(const struct dc_state *st, struct dc_result *res)
{
	const struct dc_expect *e = st->e;
	const struct dc_deferred *d;
	size_t i, j;

	for (i = 0; i < st->nr_ours; i++) {
		d = &st->ours[i];
		if (d->misc != PERF_RECORD_MISC_USER)
			dc_bad(res, "deferred record misc %#x", d->misc);
		if (!d->nr)
			dc_bad(res, "deferred record %#llx without ips",
			       d->cookie);
		for (j = 0; j < d->nr; j++)
			if (d->ips[j] >= DC_USER_TOP)
				dc_bad(res, "deferred %#llx: ips[%zu] %#llx is no user address",
				       d->cookie, j, d->ips[j]);
		if (e->pinned_ring >= 0 && d->ring != e->pinned_ring)
			dc_bad(res, "deferred record in ring %d, pinned to ring %d",
			       d->ring, e->pinned_ring);
		dc_check_user(e->w, d->ips, d->nr, res);
	}
}

/*
 * A sample that ends in PERF_CONTEXT_USER_DEFERRED and its cookie: the
 * record with that cookie follows the sample. A consumer (perf) waits for
 * it after the sample, and would wait in vain for one written before.
 */
static void dc_check_answer(struct dc_state *st, const struct dc_session *s,
			    const struct dc_sample *smp, struct dc_result *res)
{
	bool user_mode = (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_USER;
	__u64 cookie = smp->chain[smp->nr - 1];
	const struct dc_deferred *d;
	size_t j, n;

	j = dc_find_cookie(st->ours, st->nr_ours, cookie, &n);
	if (!n) {
		if (st->e->self_output && smp->time >= s->t_stop)
			res->excused++;
		else if (st->lost)	/* counted against the loss */
			st->unanswered[st->nr_unanswered++] = cookie;
		else
			dc_bad(res, "sample at %#llx: no record for cookie %#llx",
			       smp->ip, cookie);
		return;
	}
	st->tally[j].samples++;
	d = &st->ours[j];	/* more than one is an error of its own */
	if (d->time < smp->time) {
		res->answered_before++;
		dc_bad(res, "sample at %#llx: the record for cookie %#llx precedes it",
		       smp->ip, cookie);
		return;
	}
	if (d->ring != smp->ring)
		res->other_ring++;
	/* Taken in user mode: the walk starts at its ip */
	if (user_mode && d->ips[0] != smp->ip)
		dc_bad(res, "user sample at %#llx: deferred ips[0] %#llx",
		       smp->ip, d->ips[0]);
	/*
	 * Taken in a kernel entry at the pc of the workload's syscall or
	 * fault; which kind of entry is told by the outermost kernel ip, just
	 * before the PERF_CONTEXT_USER_DEFERRED that dc_check_sample() found
	 * at the end (dc_tell_entries()).
	 */
	if (!user_mode && d->ips[0] == st->e->w->pc && smp->nr >= 3) {
		st->cand[st->nr_cand].rec = j;
		st->cand[st->nr_cand].frame = smp->chain[smp->nr - 3];
		st->nr_cand++;
	}
}

static void dc_check_samples(struct dc_state *st, const struct dc_session *s,
			     const struct dc_records *recs, struct dc_result *res)
{
	__u32 pid = getpid(), tid = syscall(SYS_gettid);
	const struct dc_expect *e = st->e;
	const struct dc_sample *smp;
	size_t i;

	for (i = 0; i < recs->nr_samples; i++) {
		smp = &recs->samples[i];
		if (smp->pid != pid || smp->tid != tid) {
			if (e->per_cpu && dc_is_kthread(smp->pid) == 1)
				dc_check_kthread(smp, res);
			continue;
		}
		dc_check_sample(e, smp, res);
		if (e->pinned_ring >= 0 && smp->ring != e->pinned_ring)
			dc_bad(res, "sample in ring %d, pinned to ring %d",
			       smp->ring, e->pinned_ring);
		if (!e->defer)
			continue;
		if (smp->nr < 2 ||
		    smp->chain[smp->nr - 2] != PERF_CONTEXT_USER_DEFERRED) {
			dc_check_in_place(st->ours, st->nr_ours, smp, res);
		} else {
			res->marked++;
			dc_check_answer(st, s, smp, res);
		}
	}
}

/*
 * A syscall or fault of the workload is not the only kernel entry whose
 * user stack starts at w->pc: an interrupt pending when the syscall
 * returns (the cpu-clock hrtimer, an IPI) is taken right after
 * sysret/eret, before the instruction at w->pc, and is a kernel entry of
 * its own with a cookie of its own. If a sample lands in the kernel during
 * it (in its exit work, e.g. the task work writing the deferred record of
 * its own user mode sample, or schedule()), that sample has a cookie whose
 * record starts at w->pc too.
 *
 * The kernel callchains of the samples tell the entries apart: all samples
 * in the workload's syscalls or faults end in the same call of the entry
 * code (entry_SYSCALL_64, el0_svc, asm_exc_page_fault, ...), interrupts in
 * another one. The workload's entries are many samples long, the others a
 * few, so the most frequent outermost kernel ip is the one of the
 * workload's entries. A cookie that changes within one syscall still shows
 * up as more entries than calls: all of them end in that ip.
 */
static int dc_tell_entries(struct dc_state *st, struct dc_result *res)
{
	__u64 *frames = calloc(st->nr_cand + 1, sizeof(*frames));
	size_t i;

	if (!frames)
		return -ENOMEM;
	for (i = 0; i < st->nr_cand; i++)
		frames[i] = st->cand[i].frame;
	res->entry_frame = dc_most_frequent(frames, st->nr_cand);
	free(frames);
	for (i = 0; i < st->nr_cand; i++) {
		if (st->cand[i].frame == res->entry_frame)
			st->tally[st->cand[i].rec].entry = true;
		else
			st->tally[st->cand[i].rec].other = true;
	}
	return 0;
}

/*
 * Records a ring lost (it filled up: a call of the workload took longer
 * than the ring has room for) may be samples or deferred records: each
 * cookie left without its record and each record left without a sample
 * must be one of them, and they must be few.
 */
static void dc_check_lost(struct dc_state *st, const struct dc_records *recs,
			  struct dc_result *res)
{
	size_t i, n = 0;

	res->lost = st->lost;
	if (!st->lost)
		return;
	qsort(st->unanswered, st->nr_unanswered, sizeof(__u64), dc_cmp_u64);
	for (i = 0; i < st->nr_unanswered; i++)
		n += !i || st->unanswered[i] != st->unanswered[i - 1];
	res->unanswered = n;
	if (n + res->orphans > st->lost)
		dc_bad(res, "%zu cookies without a record, %zu records without a sample, %llu lost",
		       n, res->orphans, st->lost);
	if (st->lost * 10 > recs->nr_samples + recs->nr_deferred)
		dc_bad(res, "%llu records lost, more than a tenth of the %zu read",
		       st->lost, recs->nr_samples + recs->nr_deferred);
}

/* One record per cookie, each answering a sample; samples per entry. */
static void dc_count_cookies(const struct dc_state *st, struct dc_result *res)
{
	const struct dc_tally *t;
	size_t i, j, orphans = 0;

	for (i = 0; i < st->nr_ours; i = j) {
		for (j = i + 1; j < st->nr_ours &&
		     st->ours[j].cookie == st->ours[i].cookie; j++)
			;
		t = &st->tally[i];
		res->cookies++;
		if (!t->samples)
			orphans++;
		/* One record per cookie: the callback runs once an entry. */
		if (j - i > 1)
			dc_bad(res, "cookie %#llx: %zu deferred records",
			       st->ours[i].cookie, j - i);
		if (!t->entry) {
			res->other_entries += t->other;
			continue;
		}
		res->entries++;
		if (t->samples > res->max_per_cookie)
			res->max_per_cookie = t->samples;
	}
	/*
	 * This assumes that no other session asks for deferred callchains of
	 * this task: perf core hands each deferred record to every
	 * defer_output event of the task, whichever event's sample asked.
	 */
	if (orphans && !st->lost)
		dc_bad(res, "%zu deferred records answer no sample", orphans);
	res->orphans = orphans;
	/*
	 * Without defer_callchain this task requests no deferred unwind. A
	 * per-CPU side-band event still receives the records of any other
	 * task that completes one on that CPU, so only ours are an error.
	 */
	if (!st->e->defer && st->nr_ours)
		dc_bad(res, "%zu deferred records of this task without defer_callchain",
		       st->nr_ours);
}

static void dc_log(const struct dc_records *recs, const struct dc_result *res)
{
	if (recs->nr_deferred > res->deferred)
		ksft_print_msg("%zu deferred records of other tasks\n",
			       recs->nr_deferred - res->deferred);
	ksft_print_msg("samples %zu (user mode %zu, throttles %zu, late %zu)\n",
		       res->samples, res->user_samples, recs->throttled,
		       res->excused);
	ksft_print_msg("deferred records %zu, cookies %zu\n", res->deferred,
		       res->cookies);
	ksft_print_msg("workload stacks %zu (at pc %zu, entries %zu)\n",
		       res->workload, res->at_pc, res->entries);
	ksft_print_msg("kthread samples %zu, other ring %zu\n",
		       res->kthread_samples, res->other_ring);
	ksft_print_msg("entries through %#llx, other kernel entries at the pc %zu\n",
		       res->entry_frame, res->other_entries);
	ksft_print_msg("after their entry's record: in place %zu, with a cookie %zu\n",
		       res->in_place, res->answered_before);
	if (res->lost)
		ksft_print_msg("records lost %llu: unanswered cookies %zu, orphan records %zu\n",
			       res->lost, res->unanswered, res->orphans);
}

/*
 * Parse what the session's rings hold and check it against @e: the
 * problems in res->bad and res->why. Returns 0, or -errno when it could not
 * check (res->why says why).
 */
int dc_check(const struct dc_expect *e, struct dc_session *s,
	     struct dc_result *res)
{
	struct dc_records recs;
	struct dc_state st = { 0 };
	int err;

	memset(res, 0, sizeof(*res));
	err = dc_parse(s, &recs);
	if (!err)
		err = dc_state_init(&st, e, &recs);
	if (err) {
		snprintf(res->why, sizeof(res->why), "%s", strerror(-err));
		dc_state_free(&st);
		dc_records_free(&recs);
		return err;
	}
	res->deferred = st.nr_ours;
	dc_check_records(&st, res);
	dc_check_samples(&st, s, &recs, res);
	err = dc_tell_entries(&st, res);
	if (!err) {
		dc_count_cookies(&st, res);
		dc_check_lost(&st, &recs, res);
		dc_log(&recs, res);
	}
	dc_state_free(&st);
	dc_records_free(&recs);
	return err;
}
