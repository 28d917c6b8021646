// SPDX-License-Identifier: GPL-2.0
/*
 * attrfuzz: random perf_event_open() attributes around what the series
 * touches: defer_callchain/defer_output with every callchain option, the
 * page fault tracepoints, per-task and per-CPU events, and AUX area mmaps
 * of all sizes (on events whose PMU has no AUX support, so they must fail
 * cleanly). Every event that opens is enabled over a few faults and system
 * calls, and its ring buffer is checked record by record.
 *
 * The kernel must not crash or warn (the host checks the serial log), and:
 *   - reserved attr bits set: perf_event_open() fails with EINVAL;
 *   - every record in a ring is well formed (size, alignment, in bounds);
 *   - a PERF_RECORD_CALLCHAIN_DEFERRED holds user addresses only.
 *
 * usage: attrfuzz [iterations [seed]] (seed: 1 + the CPU it starts on);
 * prints a summary, exits 1 on a violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define USER_TOP	0x0000800000000000ULL
#elif defined(__aarch64__)
#define USER_TOP	0x0001000000000000ULL
#else
#define USER_TOP	(~0ULL)
#endif

/* The C library's kernel headers may predate deferred callchains. */
#ifndef PERF_RECORD_CALLCHAIN_DEFERRED
#define PERF_RECORD_CALLCHAIN_DEFERRED	22
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed the summary prints */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static unsigned int pick(unsigned int n)
{
	return rnd() % n;
}

static long tp_id(const char *event)
{
	char path[256], buf[32];
	long id = -1;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path),
		 "/sys/kernel/tracing/events/exceptions/%s/id", event);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len > 0) {
		buf[len] = '\0';
		id = atol(buf);
	}
	close(fd);
	return id;
}

struct stats {
	unsigned long opened, failed, reserved_rejected, mmapped, aux_rejected;
	unsigned long records, samples, deferred, lost;
	unsigned long errnos[256];
	unsigned long violations;
};

static void violation(struct stats *st, const char *fmt, unsigned long a,
		      unsigned long b)
{
	if (st->violations++ < 10) {
		printf("VIOLATION: ");
		printf(fmt, a, b);
		printf("\n");
	}
}

static void workload(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	int i;

	p = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		for (i = 0; i < 8; i++)
			p[i * page] = 1;
		munmap(p, 8 * page);
	}
	for (i = 0; i < 200; i++)
		syscall(SYS_getppid);
}

/* Walk the records of a ring; check each one's header and deferred ips. */
static void check_ring(struct stats *st, struct perf_event_mmap_page *pg,
		       size_t data_size)
{
	unsigned char *data = (unsigned char *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t rec[64];
	struct perf_event_header hdr;
	size_t i, pos, first;

	if (head - tail > data_size) {
		violation(st, "data_head %#lx runs %#lx bytes ahead",
			  head, head - tail);
		return;
	}
	while (tail < head) {
		pos = tail % data_size;
		first = data_size - pos;
		if (first >= sizeof(hdr)) {
			memcpy(&hdr, data + pos, sizeof(hdr));
		} else {
			memcpy(&hdr, data + pos, first);
			memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > head - tail) {
			violation(st, "record type %lu of size %lu", hdr.type,
				  hdr.size);
			return;
		}
		st->records++;
		if (hdr.type == PERF_RECORD_SAMPLE)
			st->samples++;
		if (hdr.type == PERF_RECORD_LOST)
			st->lost++;
		if (hdr.type == PERF_RECORD_CALLCHAIN_DEFERRED &&
		    hdr.size <= sizeof(rec)) {
			for (i = 0; i < hdr.size; i++)
				((unsigned char *)rec)[i] =
					data[(pos + i) % data_size];
			st->deferred++;
			/* header, cookie, nr, ips[nr], sample_id */
			if (rec[2] > (uint64_t)(hdr.size - 24) / 8) {
				violation(st, "deferred record: nr %lu, size %lu",
					  rec[2], hdr.size);
			} else {
				for (i = 0; i < rec[2]; i++)
					if (rec[3 + i] >= USER_TOP)
						violation(st, "deferred ips[%lu] %#lx is no user address",
							  i, rec[3 + i]);
			}
		}
		tail += hdr.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static const uint64_t sample_bits[] = {
	PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
	PERF_SAMPLE_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
	PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW, PERF_SAMPLE_REGS_USER,
	PERF_SAMPLE_STACK_USER, PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_DATA_SRC,
};

/*
 * A random attr: an event of one of the kinds the series touches, random
 * sample and callchain bits; now and then a reserved bit (returns true).
 */
static bool random_attr(struct perf_event_attr *attr, long ids[2])
{
	unsigned int i;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	switch (pick(4)) {
	case 0:
	case 1:
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = pick(2) ? PERF_COUNT_SW_CPU_CLOCK :
			       pick(2) ? PERF_COUNT_SW_TASK_CLOCK :
			       pick(2) ? PERF_COUNT_SW_PAGE_FAULTS :
					 PERF_COUNT_SW_DUMMY;
		break;
	case 2:
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = ids[pick(2)];
		break;
	default:
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = pick(2) ? PERF_COUNT_HW_CPU_CYCLES :
					 PERF_COUNT_HW_INSTRUCTIONS;
		break;
	}
	for (i = 0; i < ARRAY_SIZE(sample_bits); i++)
		if (pick(3) == 0)
			attr->sample_type |= sample_bits[i];
	if (pick(2))
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr->sample_period = pick(4) ? 1 + pick(100000) : 0;
	attr->freq = attr->sample_period && pick(8) == 0;
	if (attr->freq)
		attr->sample_freq = 1 + pick(2000);
	attr->disabled = 1;
	attr->defer_callchain = pick(2);
	attr->defer_output = pick(3) == 0;
	attr->exclude_callchain_user = pick(4) == 0;
	attr->exclude_callchain_kernel = pick(4) == 0;
	attr->exclude_kernel = pick(3) == 0;
	attr->exclude_user = pick(6) == 0;
	attr->inherit = pick(4) == 0;
	attr->sample_id_all = pick(2);
	attr->comm = pick(4) == 0;
	attr->mmap = pick(4) == 0;
	attr->task = pick(4) == 0;
	attr->watermark = pick(4) == 0;
	attr->wakeup_events = pick(16);
	attr->sample_max_stack = pick(4) ? 0 : pick(300);
	if (attr->sample_type & PERF_SAMPLE_STACK_USER)
		attr->sample_stack_user = 8 * pick(1024);
	if (attr->sample_type & PERF_SAMPLE_REGS_USER)
		attr->sample_regs_user = pick(2) ? 1 : 3;
	attr->aux_watermark = pick(4) ? 0 : pick(1 << 20);
	attr->aux_sample_size = pick(8) ? 0 : pick(1 << 16);
	if (pick(16) == 0) {
		/* The reserved bits after defer_output */
		((uint64_t *)attr)[5] |= 1ULL << (40 + pick(24));
		return true;
	}
	return false;
}

/* An AUX area after the ring at @len: none of these PMUs has one. */
static void try_aux(struct stats *st, struct perf_event_mmap_page *pg,
		    int fd, size_t len, uint32_t type)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t aux_pages = 1UL << pick(13);
	void *aux;

	pg->aux_offset = len;
	pg->aux_size = aux_pages * page + (pick(8) ? 0 : page);
	aux = mmap(NULL, pg->aux_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, pg->aux_offset);
	if (aux == MAP_FAILED) {
		st->aux_rejected++;
		return;
	}
	violation(st, "AUX area of %lu bytes mapped on type %lu",
		  pg->aux_size, type);
	munmap(aux, pg->aux_size);
}

static void one(struct stats *st, long ids[2], int ncpu)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	size_t data_pages, len;
	bool reserved;
	int fd, pid, cpu;

	reserved = random_attr(&attr, ids);
	pid = pick(4) ? 0 : -1;
	cpu = pid == -1 ? (int)pick(ncpu + 1) : (int)pick(ncpu + 2) - 1;

	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		st->failed++;
		st->errnos[errno & 255]++;
		if (reserved && errno == EINVAL)
			st->reserved_rejected++;
		else if (reserved)
			violation(st, "reserved bit: errno %lu, not EINVAL %lu",
				  errno, EINVAL);
		return;
	}
	if (reserved)
		violation(st, "reserved attr bit accepted (type %lu config %lu)",
			  attr.type, attr.config);
	st->opened++;

	data_pages = 1UL << pick(5);
	len = (1 + data_pages) * page;
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		st->mmapped++;
		if (pick(2))
			try_aux(st, pg, fd, len, attr.type);
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	workload();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (pg != MAP_FAILED) {
		check_ring(st, pg, data_pages * page);
		munmap(pg, len);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1 + sched_getcpu();
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct stats st = { 0 };
	long ids[2];
	unsigned long i;

	rng_state = seed ? seed : 1;
	ids[0] = tp_id("page_fault_user");
	ids[1] = tp_id("page_fault_kernel");
	if (ids[0] < 0 || ids[1] < 0) {
		printf("attrfuzz: no exceptions tracepoints in tracefs\n");
		return 4;	/* KSFT_SKIP */
	}
	for (i = 0; i < iterations; i++)
		one(&st, ids, ncpu);

	printf("attrfuzz: seed %#llx, %lu attrs: %lu opened, %lu refused (%lu with reserved bits, all EINVAL)\n",
	       (unsigned long long)seed, iterations, st.opened, st.failed,
	       st.reserved_rejected);
	printf("attrfuzz: %lu rings, %lu records (%lu samples, %lu deferred callchains, %lu lost), %lu AUX mmaps refused\n",
	       st.mmapped, st.records, st.samples, st.deferred, st.lost,
	       st.aux_rejected);
	printf("attrfuzz: errnos:");
	for (i = 0; i < ARRAY_SIZE(st.errnos); i++)
		if (st.errnos[i])
			printf(" %s=%lu", strerrorname_np(i) ?: "?", st.errnos[i]);
	printf("\nattrfuzz: %lu violations\n", st.violations);
	return st.violations ? 1 : 0;
}
