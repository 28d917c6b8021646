// SPDX-License-Identifier: GPL-2.0
/*
 * Who receives PERF_RECORD_CALLCHAIN_DEFERRED: every event with
 * defer_output that gets the task's side-band records, whichever event
 * asked for the record (the UAPI header tells consumers to expect records
 * they have no sample for). A child, pinned to one CPU, makes syscalls
 * under three sessions:
 *
 *   sampler:  task-clock samples of the child with defer_callchain;
 *   task:     a dummy event on the child that only sets defer_output;
 *   cpu:      a dummy CPU-wide event on the child's CPU, the same.
 *
 * Every record in the sampler's buffer must be in the other two, byte for
 * byte: the task and CPU sessions get records none of their samples (they
 * have none) refer to, and a consumer must ignore such records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "deferred_records.h"

#define RECORDS		100		/* the child runs until the sampler has these */
#define MAX_WAIT_MS	60000		/* ... or for this long, however slow the machine */
#define PERIOD_NS	1000000ULL	/* a sample per 1 ms of the child's CPU time */
#define MAX_STACK	16
#define MAX_IPS		64		/* in a record: the child's stack is shallow */

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
	char *copy;
	size_t copied;
};

/*
 * A ring for twice the samples and records the child runs for: it stops
 * within a few of them once told to.
 */
static size_t ring_len(long page)
{
	size_t rec = sizeof(struct dr_sample) + (MAX_STACK + 2) * sizeof(__u64) +
		     sizeof(struct dr_deferred) + MAX_IPS * sizeof(__u64);

	return dr_ring_len(2 * RECORDS, rec, page);
}

static int open_ring(struct ring *r, pid_t pid, int cpu, int sampler, long page)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = sampler ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_period = sampler ? PERIOD_NS : 0,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.sample_max_stack = MAX_STACK,
		.exclude_callchain_kernel = 1,
		.disabled = 1,
		.defer_callchain = sampler,
		.defer_output = 1,
	};

	r->fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->len = ring_len(page);
	r->pg = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->pg == MAP_FAILED)
		return -errno;
	r->copy = malloc(r->len - page);
	if (!r->copy)
		return -ENOMEM;
	return ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0;
}

/* Copy out what the ring holds so far. */
static void read_ring(struct ring *r, long page)
{
	r->copied = dr_ring_copy(r->pg, r->copy, r->len - page);
}

/* Records of one type in a ring, and whether an identical one is there. */
static int count_type(const struct ring *r, __u32 type)
{
	const struct perf_event_header *h;
	size_t off;
	int n = 0;

	for (off = 0; (h = dr_record(r->copy, r->copied, off)); off += h->size)
		n += h->type == type;
	return n;
}

/* Samples so far, and how many of them hold their user stack in place. */
static int samples_in_place(const struct ring *r, int *samples)
{
	const struct perf_event_header *h;
	int in_place = 0;
	size_t off;

	*samples = 0;
	for (off = 0; (h = dr_record(r->copy, r->copied, off)); off += h->size) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		(*samples)++;
		in_place += dr_sample_user_in_place((const void *)h);
	}
	return in_place;
}

static int has_record(const struct ring *r, const struct perf_event_header *want)
{
	const struct perf_event_header *h;
	size_t off;

	for (off = 0; (h = dr_record(r->copy, r->copied, off)); off += h->size)
		if (h->size == want->size && !memcmp(h, want, h->size))
			return 1;
	return 0;
}

/* The child: syscalls from when it is told to go until it is killed. */
static void child(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	for (;;)
		syscall(__NR_getppid);
}

/* How many of FROM's deferred records are not in IN. */
static int missing_records(const struct ring *from, const struct ring *in)
{
	const struct perf_event_header *h;
	int missing = 0;
	size_t off;

	for (off = 0; (h = dr_record(from->copy, from->copied, off)); off += h->size)
		if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED)
			missing += !has_record(in, h);
	return missing;
}

TEST(every_defer_output_event_gets_the_records)
{
	static const char * const name[] = { "sampler", "task", "cpu" };
	long page = sysconf(_SC_PAGESIZE);
	int go[2], status, cpu, i, ret, waited, samples, in_place, missing;
	struct ring r[3];
	pid_t pid;

	/* The first CPU this test may use: the child runs there. */
	ret = dr_first_cpus(&cpu, 1);
	ASSERT_EQ(1, ret) TH_LOG("no CPU this task may run on: %s", strerror(-ret));

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		child(go[0]);
	close(go[0]);
	/*
	 * Pinned before any event exists: a record the child's task work
	 * writes on another CPU would be in the per-task buffers only.
	 */
	ret = dr_set_cpus(pid, &cpu, 1);
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ASSERT_EQ(0, ret) TH_LOG("sched_setaffinity: %s", strerror(-ret));
	}

	for (i = 0; i < 3; i++) {
		ret = open_ring(&r[i], i == 2 ? -1 : pid, i == 2 ? cpu : -1, !i, page);
		if (ret) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			if (ret == -EACCES || ret == -EPERM)
				SKIP(return, "%s event: %s (needs CAP_PERFMON)", name[i],
				     strerror(-ret));
			if (ret == -EINVAL && !i)
				SKIP(return, "perf_event_open: EINVAL (no defer_callchain?)");
			ASSERT_EQ(0, ret) TH_LOG("%s event: %s", name[i], strerror(-ret));
		}
	}
	ASSERT_EQ(1, write(go[1], "x", 1));
	for (waited = 0; waited < MAX_WAIT_MS; waited += 5) {
		read_ring(&r[0], page);
		if (count_type(&r[0], PERF_RECORD_CALLCHAIN_DEFERRED) >= RECORDS)
			break;
		/* Every one of the first samples in place: nothing to wait for. */
		in_place = samples_in_place(&r[0], &samples);
		if (in_place >= RECORDS && in_place == samples) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			SKIP(return, DR_NO_UNWINDER);
		}
		usleep(5000);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the child failed: status %#x", status);
	for (i = 0; i < 3; i++) {
		ioctl(r[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		read_ring(&r[i], page);
		TH_LOG("%s: %d samples, %d deferred records, %d lost", name[i],
		       count_type(&r[i], PERF_RECORD_SAMPLE),
		       count_type(&r[i], PERF_RECORD_CALLCHAIN_DEFERRED),
		       count_type(&r[i], PERF_RECORD_LOST));
		EXPECT_EQ(0, count_type(&r[i], PERF_RECORD_LOST))
			TH_LOG("%s: the ring lost records; it is too small", name[i]);
	}
	ASSERT_LE(RECORDS, count_type(&r[0], PERF_RECORD_CALLCHAIN_DEFERRED))
		TH_LOG("fewer than %d deferred records in %d s", RECORDS, MAX_WAIT_MS / 1000);

	/* Each of the sampler's records, in the other two buffers as well. */
	for (i = 1; i < 3; i++) {
		missing = missing_records(&r[0], &r[i]);
		EXPECT_EQ(0, missing)
			TH_LOG("%d of the sampler's records are not in the %s session's buffer",
			       missing, name[i]);
	}
	/* Only the sampler asked, for the child only: the task session has just those. */
	EXPECT_EQ(count_type(&r[0], PERF_RECORD_CALLCHAIN_DEFERRED),
		  count_type(&r[1], PERF_RECORD_CALLCHAIN_DEFERRED));

	for (i = 0; i < 3; i++) {
		free(r[i].copy);
		munmap(r[i].pg, r[i].len);
		close(r[i].fd);
	}
	close(go[1]);
}

TEST_HARNESS_MAIN
