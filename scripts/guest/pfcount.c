// SPDX-License-Identifier: GPL-2.0
/*
 * pfcount: count this task's PERF_COUNT_SW_PAGE_FAULTS (perf stat's
 * page-faults) over one workload of N fresh anonymous pages, and print
 * the count. Only the workload is counted, after a first round on other
 * pages has taken the faults of its code and stack, so the count does not
 * depend on how the program was started or laid out: base and series
 * kernels must print the same.
 *
 *   write   a user-mode write to each page: N faults
 *   futex   FUTEX_WAKE_OP_PRIVATE on each page: the atomic op faults with
 *           page faults disabled (not counted), then the futex code faults
 *           the page in with GUP (not an exception: not counted)
 *   fp      for about a second, spin with the frame pointer into the first
 *           page, which stays absent: a sampler of callchains reads it
 *           with page faults disabled (not counted) at every sample
 *
 * -g: the task samples itself as 'perf record -g -F 1000' does (cpu-clock,
 * 1000 Hz, kernel and user callchains), for the whole run.
 *
 * usage: pfcount [-g] write|futex|fp [pages]
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin with the frame pointer on @frame; 0 where there is no way to. */
static int spin_on_frame(void *frame)
{
	unsigned long n = 1000000;

#if defined(__aarch64__)
	asm volatile("mov x9, x29\n\tmov x29, %1\n"
		     "1:\tsubs %0, %0, #1\n\tb.ne 1b\n\tmov x29, x9"
		     : "+r" (n) : "r" (frame) : "x9", "cc", "memory");
#elif defined(__x86_64__)
	asm volatile("mov %%rbp, %%r11\n\tmov %1, %%rbp\n"
		     "1:\tdec %0\n\tjnz 1b\n\tmov %%r11, %%rbp"
		     : "+r" (n) : "r" (frame) : "r11", "cc", "memory");
#elif defined(__riscv)
	asm volatile("mv t0, s0\n\tmv s0, %1\n"
		     "1:\taddi %0, %0, -1\n\tbnez %0, 1b\n\tmv s0, t0"
		     : "+r" (n) : "r" (frame) : "t0", "memory");
#else
	(void)frame;
	return 0;
#endif
	return n == 0;
}

static int work(const char *what, char *p, long pages, long step, double secs)
{
	uint32_t word = 0;
	double end;
	long i;

	if (!strcmp(what, "write")) {
		for (i = 0; i < pages; i++)
			p[i * step] = 1;
	} else if (!strcmp(what, "futex")) {
		for (i = 0; i < pages; i++)
			syscall(SYS_futex, &word, FUTEX_WAKE_OP_PRIVATE, 0, NULL,
				p + i * step,
				FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
	} else {
		/* Mid-page: riscv's frame record is below the frame pointer. */
		for (end = now() + secs; now() < end;)
			if (!spin_on_frame(p + step / 2))
				return -1;
	}
	return 0;
}

/* Sample this task as 'perf record -g -F 1000' would; 0, or -1 on error. */
static int sample_callchains(long step)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = 1000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
	};
	int fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd < 0 || mmap(NULL, 9 * step, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
		perror("perf_event_open(cpu-clock, callchains)");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sample = argc > 1 && !strcmp(argv[1], "-g");
	long pages = argc > 2 + sample ? atol(argv[2 + sample]) : 64;
	long step = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	uint64_t count;
	char *p, *warm;
	int fd, ret;

	argv += sample;
	if (argc < 2 + sample || pages <= 0 || (strcmp(argv[1], "write") &&
	    strcmp(argv[1], "futex") && strcmp(argv[1], "fp"))) {
		fprintf(stderr, "usage: pfcount [-g] write|futex|fp [pages > 0]\n");
		return 2;
	}
	if (sample && sample_callchains(step))
		return 1;
	p = mmap(NULL, 2 * pages * step, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	warm = p + pages * step;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open(page-faults)");
		return 1;
	}
	if (work(argv[1], warm, pages, step, 0.01)) {
		fprintf(stderr, "pfcount: fp: not on this architecture\n");
		return 4;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ret = work(argv[1], p, pages, step, 1);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (ret || read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror("read(page-faults)");
		return 1;
	}
	printf("%llu\n", (unsigned long long)count);
	return 0;
}
