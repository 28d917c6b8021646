// SPDX-License-Identifier: GPL-2.0
/*
 * The exceptions:page_fault_user and exceptions:page_fault_kernel events.
 *
 * page_fault: each variant takes one kind of fault, once a page, at known
 * addresses, from a known instruction, with a known access type, while a
 * perf tracepoint event samples the events with their raw records. Read
 * with the layout tracefs gives, the fields must say which task faulted,
 * where, from where and how, in the event of the fault's mode. (What
 * tracefs prints is ftracetest's test.d/event/page-fault-events.tc.)
 *
 * fault_count: each variant is a kind of fault of the table in
 * Documentation/trace/events-page-fault.rst. Over the same work it counts
 * both events, perf's page-faults in user and in kernel mode, and the
 * task's rusage faults: perf counts the faults the events report, except
 * those taken with page faults disabled (and, on x86, those on kernel
 * addresses), which it has never counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif

#define TRACEFS			"/sys/kernel/tracing"
#define PROBE_GROUP		"selftest_page_fault"
#define USER_MAP_ADDR		0xcafe0000UL
/*
 * A case takes at most 16 faults of its own and a few of its code and
 * stack: MAX_EVENTS samples of about 50 bytes fit in the ring buffer's
 * RING_PAGES (after its control page) with room to spare.
 */
#define MAX_EVENTS		256
#define RING_PAGES		8
/* The faulting instruction is inside the access function, far shorter. */
#define ACCESS_FN_MAX_SIZE	256
/* Pages of each fault_count round. */
#define COUNT_PAGES		16

/*
 * A return instruction, the code of the exec variant's page, on the
 * architectures whose error codes decode_error_code() knows.
 */
#if defined(__aarch64__)
static const unsigned char ret_insn[] = { 0xc0, 0x03, 0x5f, 0xd6 };
#elif defined(__x86_64__) || defined(__i386__)
static const unsigned char ret_insn[] = { 0xc3 };
#elif defined(__riscv)
static const unsigned char ret_insn[] = { 0x67, 0x80, 0x00, 0x00 };
#else
static const unsigned char ret_insn[] = { };
#endif
#define KNOWN_ARCH		(sizeof(ret_insn) > 0)

/* What an error code says about a fault, as far as the test is concerned. */
struct pf_error {
	bool user;	/* taken in user mode */
	bool write;	/* a data write */
	bool exec;	/* an instruction fetch */
	bool present;	/* the page was mapped: the access rights refused it */
};

/* Which fields of struct pf_error an architecture's error code encodes. */
#define PF_USER		0x1
#define PF_WRITE	0x2
#define PF_EXEC		0x4
#define PF_PRESENT	0x8
#define PF_ALL		(PF_USER | PF_WRITE | PF_EXEC | PF_PRESENT)

/*
 * Decode the error code of an event into @pe. Returns the fields the
 * error code encodes, 0 if it is not one of a page fault.
 */
static unsigned int decode_error_code(unsigned long err, struct pf_error *pe)
{
#if defined(__aarch64__)
	unsigned long ec = (err >> 26) & 0x3f, fsc = err & 0x3f;	/* ESR_ELx */

	if (ec != 0x20 && ec != 0x21 && ec != 0x24 && ec != 0x25)
		return 0;	/* not an instruction or data abort */
	pe->exec = ec < 0x24;
	pe->write = !pe->exec && (err & (1UL << 6));	/* WnR */
	pe->user = !(ec & 1);				/* from a lower EL */
	if ((fsc >= 0x04 && fsc <= 0x07) || fsc == 0x2b)
		pe->present = false;	/* translation fault */
	else if (fsc >= 0x08 && fsc <= 0x0f)
		pe->present = true;	/* access flag or permission fault */
	else
		return 0;
	return PF_ALL;
#elif defined(__x86_64__) || defined(__i386__)
	if (err & 0x8)			/* X86_PF_RSVD */
		return 0;
	pe->present = err & 0x1;	/* X86_PF_PROT */
	pe->write = err & 0x2;
	pe->user = err & 0x4;
	pe->exec = err & 0x10;		/* X86_PF_INSTR */
	return PF_ALL;
#elif defined(__riscv)
	/* scause 12, 13, 15: instruction, load, store/AMO page fault */
	if (err != 12 && err != 13 && err != 15)
		return 0;
	pe->exec = err == 12;
	pe->write = err == 15;
	return PF_WRITE | PF_EXEC;
#else
	return 0;
#endif
}

/* Write @val to @dir/@file. Returns 0 or -errno. */
static int write_file(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	ssize_t len = strlen(val);
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (write(fd, val, len) != len)
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

static bool is_kernel_addr(unsigned long addr)
{
	return addr >> (sizeof(long) * CHAR_BIT - 1);
}

/* Why the test cannot run here, or NULL. The events come both or neither. */
static const char *no_events(struct __test_metadata *_metadata)
{
	bool user, kernel;

	if (geteuid())
		return "must be run as root";
	if (access(TRACEFS "/events", F_OK))
		return "tracefs is not mounted at " TRACEFS;
	user = !access(TRACEFS "/events/exceptions/page_fault_user", F_OK);
	kernel = !access(TRACEFS "/events/exceptions/page_fault_kernel", F_OK);
	ASSERT_EQ(user, kernel) TH_LOG("only one of exceptions:page_fault_{user,kernel}");
	return user ? NULL : "no exceptions:page_fault_{user,kernel} events";
}

/* The fields of an event's raw record the test reads, and where they are. */
enum { F_TYPE, F_PID, F_ADDRESS, F_IP, F_ERROR, NR_FIELDS };

struct recorder {
	unsigned long id;
	struct { int offset, size; } field[NR_FIELDS];
	int fd;
	struct perf_event_mmap_page *ring;
	size_t len;
	__u64 lost;
};

/* The id of @event and its fields' layout, from tracefs. */
static int read_format(const char *event, struct recorder *rec)
{
	static const char * const names[NR_FIELDS] = {
		"common_type", "common_pid", "address", "ip", "error_code",
	};
	char path[PATH_MAX], line[256], decl[128], *name;
	unsigned int found = 0, i;
	int offset, size;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/events/exceptions/%s/id", event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%lu", &rec->id) != 1)
		found = ~0U;
	fclose(f);
	snprintf(path, sizeof(path), TRACEFS "/events/exceptions/%s/format", event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* "	field:unsigned long address;	offset:8;	size:8;	signed:0;" */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " field:%127[^;]; offset:%d; size:%d;", decl, &offset, &size) != 3)
			continue;
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		for (i = 0; i < NR_FIELDS; i++) {
			if (strcmp(name, names[i]))
				continue;
			rec->field[i].offset = offset;
			rec->field[i].size = size;
			if (offset >= 0 && (size == 1 || size == 2 || size == 4 || size == 8))
				found |= 1U << i;
		}
	}
	fclose(f);
	return found == (1U << NR_FIELDS) - 1 ? 0 : -EINVAL;
}

/* A perf tracepoint event of @event and this thread, disabled, sampling each one. */
static int recorder_open(struct recorder *rec, const char *event)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = 1,
	};
	int ret = read_format(event, rec);

	if (ret)
		return ret;
	attr.config = rec->id;
	rec->fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (rec->fd < 0)
		return -errno;
	rec->len = (1 + RING_PAGES) * getpagesize();
	rec->ring = mmap(NULL, rec->len, PROT_READ | PROT_WRITE, MAP_SHARED, rec->fd, 0);
	if (rec->ring != MAP_FAILED)
		return 0;
	rec->ring = NULL;
	return -errno;
}

static void recorder_close(struct recorder *rec)
{
	if (rec->ring)
		munmap(rec->ring, rec->len);
	if (rec->fd >= 0)
		close(rec->fd);
	rec->ring = NULL;
	rec->fd = -1;
}

static void recorder_enable(struct recorder *rec, bool on)
{
	ioctl(rec->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

struct pf_event {
	unsigned long address, ip, error_code;
	int pid;
};

/* A PERF_RECORD_SAMPLE of PERF_SAMPLE_RAW */
struct sample {
	struct perf_event_header header;
	__u32 raw_size;
	unsigned char raw[];
};

static unsigned long raw_field(const struct recorder *rec, const struct sample *s, int i)
{
	union { __u8 u8; __u16 u16; __u32 u32; __u64 u64; } v;
	int size = rec->field[i].size;

	memcpy(&v, s->raw + rec->field[i].offset, size);
	return size == 8 ? v.u64 : size == 4 ? v.u32 : size == 2 ? v.u16 : v.u8;
}

static bool parse_sample(const struct recorder *rec, const struct sample *s, struct pf_event *ev)
{
	int i;

	if (s->header.size < offsetof(struct sample, raw) ||
	    s->raw_size > s->header.size - offsetof(struct sample, raw))
		return false;
	for (i = 0; i < NR_FIELDS; i++)
		if (rec->field[i].offset + rec->field[i].size > (int)s->raw_size)
			return false;
	ev->address = raw_field(rec, s, F_ADDRESS);
	ev->ip = raw_field(rec, s, F_IP);
	ev->error_code = raw_field(rec, s, F_ERROR);
	ev->pid = raw_field(rec, s, F_PID);
	return raw_field(rec, s, F_TYPE) == rec->id;
}

/*
 * Take the records out of the ring, the samples into @evs. Returns their
 * number, -1 if a record is malformed or there are more than @max.
 */
static int recorder_collect(struct recorder *rec, struct pf_event *evs, int max)
{
	const unsigned char *data = (unsigned char *)rec->ring + rec->ring->data_offset;
	__u64 size = rec->ring->data_size, head, tail, off, i;
	__u64 buf[64];
	struct perf_event_header *hdr = (void *)buf;
	int nr = 0;

	/* Read the records only after seeing the head that covers them. */
	head = __atomic_load_n(&rec->ring->data_head, __ATOMIC_ACQUIRE);
	for (tail = rec->ring->data_tail; tail < head; tail += hdr->size) {
		/* A record may wrap around the end of the ring. */
		for (i = 0, off = tail; i < sizeof(*hdr) || i < hdr->size; i++, off++) {
			if (i >= sizeof(buf) || off >= head)
				return -1;
			((unsigned char *)buf)[i] = data[off & (size - 1)];
		}
		if (hdr->size < sizeof(*hdr))
			return -1;
		if (hdr->type == PERF_RECORD_LOST)	/* { header; id; lost; } */
			rec->lost += buf[2];
		if (hdr->type == PERF_RECORD_SAMPLE &&
		    (nr == max || !parse_sample(rec, (void *)buf, &evs[nr++])))
			return -1;
	}
	/* Hand the space back only once the records are copied out. */
	__atomic_store_n(&rec->ring->data_tail, tail, __ATOMIC_RELEASE);
	return nr;
}

/*
 * The access functions: each accesses the first byte of @nr pages @step
 * bytes apart, returns @nr * @step, and holds the faulting instruction of
 * the user-mode variants. call_access_fn() calls them through a pointer the
 * compiler cannot see through: they are neither inlined nor specialised.
 */
typedef long (*access_fn)(char *p, size_t nr, size_t step, int fd);

static long access_read(char *p, size_t nr, size_t step, int fd)
{
	for (size_t i = 0; i < nr; i++) {
		char c = p[i * step];

		asm volatile("" : : "r" (c) : "memory");	/* one load a page */
	}
	return nr * step;
}

static long access_write(char *p, size_t nr, size_t step, int fd)
{
	for (size_t i = 0; i < nr; i++) {
		p[i * step] = 1;
		asm volatile("" : : : "memory");		/* one store a page */
	}
	return nr * step;
}

/* Call the return instruction at the start of each page. */
static long access_exec(char *p, size_t nr, size_t step, int fd)
{
	for (size_t i = 0; i < nr; i++)
		((void (*)(void))(p + i * step))();
	return nr * step;
}

/* read() @fd into the pages: the kernel writes them. */
static long access_uaccess(char *p, size_t nr, size_t step, int fd)
{
	return pread(fd, p, nr * step, 0);
}

static long call_access_fn(access_fn fn, char *p, size_t nr, size_t step, int fd)
{
	asm volatile("" : "+r" (fn));
	return fn(p, nr, step, fd);
}

static sigjmp_buf segv_env;

static void segv_handler(int sig)
{
	siglongjmp(segv_env, 1);
}

/* Read @p with @fn: whether that raised SIGSEGV. */
static bool access_segv(access_fn fn, char *p)
{
	struct sigaction sa = { .sa_handler = segv_handler }, old;
	bool segv = true;

	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(segv_env, 1)) {
		call_access_fn(fn, p, 1, 0, -1);
		segv = false;
	}
	sigaction(SIGSEGV, &old, NULL);
	return segv;
}

/*
 * A memfd of @len bytes, none of them in memory yet; it says whether it may
 * be executable, as vm.memfd_noexec = 2 asks.
 */
static int new_memfd(bool exec, size_t len)
{
	int fd = memfd_create("page_fault_events",
			      MFD_CLOEXEC | (exec ? MFD_EXEC : MFD_NOEXEC_SEAL));

	if (fd >= 0 && ftruncate(fd, len)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

enum backing {
	ANON,		/* private anonymous, read-write */
	ANON_NONE,	/* private anonymous, PROT_NONE */
	FILE_EXEC,	/* PROT_READ | PROT_EXEC of a memfd of code */
};

enum actor { SELF, CHILD, THREAD };

/*
 * The access and what was recorded of it, shared with the child or thread
 * that makes it: each task records its own faults.
 */
struct access {
	const char *event;
	access_fn fn;
	char *start;
	size_t nr, step;
	int fd;			/* what access_uaccess() reads */
	bool sigsegv;		/* each access raises SIGSEGV */
	/* What happened */
	pid_t tid;
	unsigned int done;	/* pages accessed, or that raised SIGSEGV */
	int ret;		/* of recorder_open() */
	int nr_evs;		/* of recorder_collect() */
	__u64 lost;
	struct pf_event evs[MAX_EVENTS];
};

static void record_access(struct access *a)
{
	struct recorder rec = { .fd = -1 };

	a->tid = syscall(SYS_gettid);
	a->ret = recorder_open(&rec, a->event);
	if (a->ret)
		return;
	recorder_enable(&rec, true);
	if (a->sigsegv) {
		for (size_t i = 0; i < a->nr; i++)
			a->done += access_segv(a->fn, a->start + i * a->step);
	} else {
		long ret = call_access_fn(a->fn, a->start, a->nr, a->step, a->fd);

		a->done = ret == (long)(a->nr * a->step) ? a->nr : 0;
	}
	recorder_enable(&rec, false);
	a->nr_evs = recorder_collect(&rec, a->evs, MAX_EVENTS);
	a->lost = rec.lost;
	recorder_close(&rec);
}

static void *access_thread(void *a)
{
	record_access(a);
	return NULL;
}

FIXTURE(page_fault)
{
	struct access *a;
	char *map;
	size_t len;
	int fd;
};

FIXTURE_VARIANT(page_fault)
{
	enum backing backing;
	unsigned long addr;	/* fixed address of the mapping, or 0 */
	unsigned int nr_pages;
	access_fn prepare;	/* run over the pages before recording */
	enum actor actor;
	access_fn access;	/* the access recorded, once a page */
	bool sigsegv;
	struct pf_error want;	/* .user selects the event */
};

/* The first write of anonymous memory, at addresses known in advance. */
FIXTURE_VARIANT_ADD(page_fault, user_write)
{
	.addr = USER_MAP_ADDR, .nr_pages = 16, .access = access_write,
	.want = { .user = true, .write = true },
};

/* Writing over the zero page that a first read mapped: a present page. */
FIXTURE_VARIANT_ADD(page_fault, anon_write_after_read)
{
	.nr_pages = 16, .prepare = access_read, .access = access_write,
	.want = { .user = true, .write = true, .present = true },
};

/*
 * After fork() a write in the child faults on a present page to copy it.
 * (An arm64 CPU without hardware access flag updates reports an access
 * flag fault on the child's old PTEs: present too.)
 */
FIXTURE_VARIANT_ADD(page_fault, cow_write)
{
	.nr_pages = 16, .prepare = access_write, .actor = CHILD, .access = access_write,
	.want = { .user = true, .write = true, .present = true },
};

/*
 * A fetch from a page of code written with write(), never through the
 * mapping. One page: fault-around would map the others.
 */
FIXTURE_VARIANT_ADD(page_fault, exec)
{
	.backing = FILE_EXEC, .nr_pages = 1, .access = access_exec,
	.want = { .user = true, .exec = true },
};

/* The event comes before the access is refused with SIGSEGV. */
FIXTURE_VARIANT_ADD(page_fault, prot_none_read)
{
	.backing = ANON_NONE, .nr_pages = 4, .access = access_read, .sigsegv = true,
	.want = { .user = true },
};

/* The kernel writing to user memory never touched: page_fault_kernel. */
FIXTURE_VARIANT_ADD(page_fault, kernel_write_to_user)
{
	.nr_pages = 4, .access = access_uaccess, .want = { .write = true },
};

/* The faults of a second thread carry its thread id. */
FIXTURE_VARIANT_ADD(page_fault, thread_write)
{
	.nr_pages = 16, .actor = THREAD, .access = access_write,
	.want = { .user = true, .write = true },
};

FIXTURE_SETUP(page_fault)
{
	const char *why;

	self->fd = -1;
	why = no_events(_metadata);
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(page_fault)
{
	if (self->a) {
		if (self->a->fd >= 0)
			close(self->a->fd);
		munmap(self->a, sizeof(*self->a));
	}
	if (self->map)
		munmap(self->map, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/* Map the pages of @variant, or skip where the system does not allow it. */
static void map_pages(struct __test_metadata *_metadata, FIXTURE_DATA(page_fault) * self,
		      const FIXTURE_VARIANT(page_fault) * variant)
{
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *map;

	self->len = variant->nr_pages * getpagesize();
	if (variant->backing == ANON_NONE)
		prot = PROT_NONE;
	if (variant->backing == FILE_EXEC) {
		if (!KNOWN_ARCH)
			SKIP(return, "no return instruction known for this architecture");
		self->fd = new_memfd(true, self->len);
		if (self->fd < 0 && errno == EACCES)
			SKIP(return, "vm.memfd_noexec forbids executable memfds");
		ASSERT_LE(0, self->fd) TH_LOG("memfd_create: %s", strerror(errno));
		/* Stored through a mapping, the code would be mapped already. */
		ASSERT_EQ(sizeof(ret_insn), pwrite(self->fd, ret_insn, sizeof(ret_insn), 0));
		prot = PROT_READ | PROT_EXEC;
		flags = MAP_PRIVATE;
	}
	if (variant->addr)
		flags |= MAP_FIXED_NOREPLACE;
	map = mmap((void *)variant->addr, self->len, prot, flags, self->fd, 0);
	if (map == MAP_FAILED && variant->addr && errno == EEXIST)
		SKIP(return, "0x%lx is mapped already", variant->addr);
	if (map == MAP_FAILED && (prot & PROT_EXEC) && (errno == EPERM || errno == EACCES))
		SKIP(return, "cannot map a memfd executable: %s", strerror(errno));
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	self->map = map;
	/* One fault a page: no huge pages, no large folios. */
	madvise(map, self->len, MADV_NOHUGEPAGE);
}

/* Have @actor make the access. */
static void run_actor(struct __test_metadata *_metadata, enum actor actor, struct access *a)
{
	pthread_t thread;
	int status = 0;
	pid_t child;

	if (actor == SELF) {
		record_access(a);
	} else if (actor == THREAD) {
		EXPECT_EQ(0, pthread_create(&thread, NULL, access_thread, a));
		EXPECT_EQ(0, pthread_join(thread, NULL));
	} else {
		child = fork();
		if (!child) {
			record_access(a);
			_exit(0);
		}
		EXPECT_EQ(child, waitpid(child, &status, 0));
		EXPECT_EQ(0, status) TH_LOG("the child exited with status 0x%x", status);
	}
}

/* The @n-th event of the pages. */
static void check_event(struct __test_metadata *_metadata,
			const FIXTURE_VARIANT(page_fault) * variant, const struct access *a,
			const struct pf_event *ev, unsigned int n, unsigned long *first_ip)
{
	unsigned long page = (unsigned long)a->start + n * a->step, fn = (unsigned long)a->fn;
	const struct pf_error *want = &variant->want;
	struct pf_error got = {};
	unsigned int known, wrong;

	/* The kernel's copy routines may fault anywhere in the page. */
	EXPECT_EQ(page, variant->access == access_uaccess ? ev->address & ~(a->step - 1) :
							    ev->address);
	EXPECT_EQ(a->tid, ev->pid);
	if (variant->access == access_uaccess) {
		EXPECT_TRUE(is_kernel_addr(ev->ip)) TH_LOG("ip 0x%lx", ev->ip);
	} else if (variant->access == access_exec) {
		EXPECT_EQ(ev->address, ev->ip);		/* the fetch faults */
	} else {
		/* One instruction of the access function faults, always the same. */
		EXPECT_TRUE(ev->ip - fn < ACCESS_FN_MAX_SIZE)
			TH_LOG("ip 0x%lx not in the access function at 0x%lx", ev->ip, fn);
		if (!n)
			*first_ip = ev->ip;
		EXPECT_EQ(*first_ip, ev->ip);
	}

	known = decode_error_code(ev->error_code, &got);
	if (!known && !KNOWN_ARCH)
		return;
	wrong = (got.user != want->user ? PF_USER : 0) | (got.write != want->write ? PF_WRITE : 0) |
		(got.exec != want->exec ? PF_EXEC : 0) |
		(got.present != want->present ? PF_PRESENT : 0);
	EXPECT_TRUE(known && !(wrong & known))
		TH_LOG("error_code 0x%lx: not a page fault's, or wrong in 0x%x (%s)",
		       ev->error_code, wrong & known,
		       "0x1 user, 0x2 write, 0x4 exec, 0x8 present");
}

/*
 * Set the memory up as the variant says, record its access, and check
 * the events: one a page, in order, from the task that accessed.
 */
TEST_F(page_fault, perf)
{
	const char *event = variant->want.user ? "page_fault_user" : "page_fault_kernel";
	struct recorder rec = { .fd = -1 };
	unsigned long start, end, first_ip = 0;
	unsigned int n = 0;
	struct access *a;
	int ret, i;

	ret = recorder_open(&rec, event);
	recorder_close(&rec);
	/* Without CONFIG_PERF_EVENTS tracefs has no id files. */
	if (ret == -ENOENT && access(TRACEFS "/events/exceptions/page_fault_user/id", F_OK))
		SKIP(return, "%s has no perf event id", event);
	/* A tracepoint that tracefs lists must be known to perf too. */
	ASSERT_TRUE(ret != -ENOENT && ret != -EINVAL) TH_LOG("%s: %s", event, strerror(-ret));
	if (ret)
		SKIP(return, "perf_event_open(%s): %s", event, strerror(-ret));

	map_pages(_metadata, self, variant);
	if (_metadata->exit_code == KSFT_SKIP)
		return;
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	self->a = a;
	a->event = event;
	a->fn = variant->access;
	a->start = self->map;
	a->nr = variant->nr_pages;
	a->step = getpagesize();
	a->fd = -1;
	a->sigsegv = variant->sigsegv;
	if (variant->access == access_uaccess) {
		a->fd = new_memfd(false, self->len);
		ASSERT_LE(0, a->fd) TH_LOG("memfd: %s", strerror(errno));
	}
	if (variant->prepare)
		call_access_fn(variant->prepare, a->start, a->nr, a->step, -1);
	/* The code of the access function faults in before recording. */
	call_access_fn(a->fn, a->start, 0, a->step, a->fd);

	run_actor(_metadata, variant->actor, a);
	ASSERT_EQ(0, a->ret) TH_LOG("cannot record: %s", strerror(-a->ret));
	EXPECT_EQ(a->nr, a->done) TH_LOG("the access did not do what it should");
	EXPECT_LE(0, a->nr_evs) TH_LOG("a perf record is malformed, or there are too many");
	EXPECT_EQ(0, a->lost) TH_LOG("%llu events lost", a->lost);
	/* Other faults of the task (stack, code) are not the test's. */
	start = (unsigned long)a->start;
	end = start + a->nr * a->step;
	for (i = 0; i < a->nr_evs; i++)
		if (a->evs[i].address >= start && a->evs[i].address < end)
			check_event(_metadata, variant, a, &a->evs[i], n++, &first_ip);
	EXPECT_EQ(a->nr, n) TH_LOG("%u events in [0x%lx, 0x%lx)", n, start, end);
	for (i = 0; i < a->nr_evs && (n != a->nr || _metadata->exit_code); i++)
		TH_LOG("event %d: pid %d address 0x%lx ip 0x%lx error_code 0x%lx", i, a->evs[i].pid,
		       a->evs[i].address, a->evs[i].ip, a->evs[i].error_code);
}

enum count_work {
	WORK_USER_WRITE,	/* user-mode writes to fresh anonymous pages */
	WORK_UACCESS,		/* read() into fresh pages: the kernel faults */
	WORK_FAULTS_DISABLED,	/* FUTEX_WAKE_OP on fresh pages */
	WORK_SEGV_USER_ADDR,	/* user-mode reads of PROT_NONE pages */
	WORK_SEGV_KERNEL_ADDR,	/* user-mode reads of an unmapped kernel address */
	/* The works with a dynamic event (probe_def()) */
	WORK_NOFAULT_KERNEL_ADDR, /* user writes; an eprobe reads a kernel address */
	WORK_KPROBE_FETCH,	/* user writes; a kprobe faults on their pages */
	WORK_KPROBE_STEP,	/* getdents64() into fresh pages, its store probed */
};

/* The counters, one group, in the order it is read. */
enum { CNT_SW_USER, CNT_SW_KERNEL, CNT_TP_USER, CNT_TP_KERNEL, NR_CNT };

static const char * const pf_events[] = { "page_fault_user", "page_fault_kernel" };

FIXTURE(fault_count)
{
	int cnt[NR_CNT];
	char inst[PATH_MAX];	/* the probe's trace instance, if any */
	bool probe;		/* the probe is defined */
	char *warm, *map;	/* COUNT_PAGES pages each */
	int fd;			/* the work's file, or -1 */
};

FIXTURE_VARIANT(fault_count)
{
	enum count_work work;
	/*
	 * Events per access in user and kernel mode: 1 if each access is
	 * reported, -1 if none is, 0 if it is not this mode's to say.
	 */
	int user, kernel;
	/* perf's page-faults counts fewer than one access a mode. */
	bool perf_skips_user, perf_skips_kernel;
	/*
	 * The task's rusage faults: 1 if they are the events of both modes
	 * (every fault is handled, once), -1 if fewer than one per access.
	 */
	int rusage;
	/* The kprobe is on the faulting instruction (found by a first fault). */
	bool probe_at_fault;
};

FIXTURE_VARIANT_ADD(fault_count, user_write)
{
	.work = WORK_USER_WRITE, .user = 1, .kernel = -1, .rusage = 1,
};

FIXTURE_VARIANT_ADD(fault_count, uaccess)
{
	.work = WORK_UACCESS, .user = -1, .kernel = 1, .rusage = 1,
};

/* futex_atomic_op_inuser() runs with page faults disabled. */
FIXTURE_VARIANT_ADD(fault_count, faults_disabled)
{
	.work = WORK_FAULTS_DISABLED, .kernel = 1, .perf_skips_kernel = true,
};

FIXTURE_VARIANT_ADD(fault_count, segv_user_addr)
{
	.work = WORK_SEGV_USER_ADDR, .user = 1, .rusage = -1,
};

/*
 * arm64 sends translation faults on kernel addresses to do_bad_area(), not
 * do_page_fault(); x86 and riscv take them as page faults, and x86 counts
 * none on a kernel address in perf.
 */
FIXTURE_VARIANT_ADD(fault_count, segv_kernel_addr)
{
	.work = WORK_SEGV_KERNEL_ADDR,
#if defined(__aarch64__)
	.user = -1,
#elif defined(__x86_64__) || defined(__i386__)
	.user = 1, .perf_skips_user = true,
#else
	.user = 1,
#endif
};

/*
 * A nofault read of an unmapped kernel address from kernel mode on each
 * user fault: an eprobe on page_fault_user fetching the last page of the
 * address space with copy_from_kernel_nofault().
 */
FIXTURE_VARIANT_ADD(fault_count, nofault_kernel_addr)
{
	.work = WORK_NOFAULT_KERNEL_ADDR, .user = 1,
#if defined(__aarch64__)
	.kernel = -1,
#else
	.kernel = 1,
#endif
	.perf_skips_kernel = true,
};

/*
 * A fault in a kprobe's handler on each user fault: a kprobe on
 * handle_mm_fault() fetching the address being faulted in as a user
 * string. riscv's kprobe_fault_handler() fixes up a fault of a probe's
 * handler, so kprobe_page_fault() consumes it: no event. arm64 and x86
 * leave it to the fault handler, which fixes it up as any fault with page
 * faults disabled.
 */
FIXTURE_VARIANT_ADD(fault_count, kprobe_fetch)
{
	.work = WORK_KPROBE_FETCH, .user = 1,
#if defined(__riscv)
	.kernel = -1,
#else
	.kernel = 1,
#endif
	.perf_skips_kernel = true,
};

/*
 * A fault of an instruction that kprobes single-steps out of line: a kprobe
 * on the store with which getdents64() first writes to a fresh page, so
 * every fault is taken by the copy in the kprobe's slot.
 * kprobe_page_fault() puts the probed address back before the events
 * report the fault: once, with the probed address as ip. (arm64's kprobes
 * do not probe instructions with an exception table entry: a skip.)
 */
FIXTURE_VARIANT_ADD(fault_count, kprobe_single_step)
{
	.work = WORK_KPROBE_STEP, .user = -1, .kernel = 1, .probe_at_fault = true,
};

/* Fresh pages for @work, one fault each. */
static char *count_map(enum count_work work)
{
	size_t len = COUNT_PAGES * getpagesize();
	int prot = work == WORK_SEGV_USER_ADDR ? PROT_NONE : PROT_READ | PROT_WRITE;
	char *map = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED)
		return NULL;
	madvise(map, len, MADV_NOHUGEPAGE);
	return map;
}

/* Fault once in each of @nr pages at @map as @work does; how many did not. */
static int count_work(enum count_work work, char *map, int fd, size_t nr)
{
	size_t page_size = getpagesize();
	int wrong = 0, word = 0;

	for (size_t i = 0; i < nr; i++) {
		char *p = map + i * page_size;

		switch (work) {
		case WORK_USER_WRITE:
		case WORK_NOFAULT_KERNEL_ADDR:
		case WORK_KPROBE_FETCH:
			call_access_fn(access_write, p, 1, 0, -1);
			break;
		case WORK_UACCESS:
			wrong += pread(fd, p, page_size, 0) != (ssize_t)page_size;
			break;
		case WORK_FAULTS_DISABLED:
			wrong += syscall(SYS_futex, &word, FUTEX_WAKE_OP_PRIVATE, 1, NULL,
					 p, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0)) < 0;
			break;
		case WORK_SEGV_USER_ADDR:
			wrong += !access_segv(access_read, p);
			break;
		case WORK_SEGV_KERNEL_ADDR:
			/* The last page of the address space: never mapped. */
			wrong += !access_segv(access_read, (char *)-page_size);
			break;
		case WORK_KPROBE_STEP:
			/* @fd is a directory: getdents64() writes its entries to @p. */
			lseek(fd, 0, SEEK_SET);
			wrong += syscall(SYS_getdents64, fd, p, page_size) <= 0;
			break;
		}
	}
	return wrong;
}

/*
 * The ip of the kernel's fault when getdents64() writes to a fresh page,
 * from a page_fault_kernel sample; 0 if there was none.
 */
static unsigned long step_find_ip(int dir)
{
	struct recorder rec = { .fd = -1 };
	char *p = count_map(WORK_KPROBE_STEP);
	struct pf_event evs[16];
	unsigned long ip = 0;
	int nr;

	if (p && !recorder_open(&rec, pf_events[1])) {
		recorder_enable(&rec, true);
		count_work(WORK_KPROBE_STEP, p, dir, 1);
		recorder_enable(&rec, false);
		nr = recorder_collect(&rec, evs, 16);
		while (nr-- > 0)
			if (evs[nr].address - (unsigned long)p < (unsigned long)getpagesize())
				ip = evs[nr].ip;
	}
	recorder_close(&rec);
	if (p)
		munmap(p, COUNT_PAGES * getpagesize());
	return ip;
}

/* The dynamic event of @work, in PROBE_GROUP; NULL if it has none. */
static const char *probe_def(enum count_work work, unsigned long step_ip, char *buf)
{
	if (work == WORK_NOFAULT_KERNEL_ADDR)
		sprintf(buf, "e:%s/probe exceptions.page_fault_user val=@0x%lx:u64",
			PROBE_GROUP, -(unsigned long)getpagesize());
	else if (work == WORK_KPROBE_FETCH)
		sprintf(buf, "p:%s/probe handle_mm_fault val=+u0($arg2):ustring", PROBE_GROUP);
	else if (work == WORK_KPROBE_STEP)
		sprintf(buf, "p:%s/probe 0x%lx", PROBE_GROUP, step_ip);
	else
		return NULL;
	return buf;
}

/* Define @def, and enable it for this process in an instance of its own. */
static int probe_start(FIXTURE_DATA(fault_count) * self, const char *def)
{
	char filter[32];
	int ret;

	ret = write_file(TRACEFS, "dynamic_events", def);
	if (ret)
		return ret;
	self->probe = true;
	snprintf(self->inst, sizeof(self->inst), TRACEFS "/instances/%s_%d", PROBE_GROUP,
		 getpid());
	if (mkdir(self->inst, 0700)) {
		self->inst[0] = '\0';
		return -errno;
	}
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	ret = write_file(self->inst, "events/" PROBE_GROUP "/probe/filter", filter);
	return ret ?: write_file(self->inst, "events/" PROBE_GROUP "/probe/enable", "1");
}

static void probe_stop(FIXTURE_DATA(fault_count) * self)
{
	if (self->inst[0]) {
		write_file(self->inst, "events/enable", "0");
		rmdir(self->inst);
		self->inst[0] = '\0';
	}
	if (self->probe)
		write_file(TRACEFS, "dynamic_events", "-:" PROBE_GROUP "/probe");
	self->probe = false;
}

/* How many records of the probe the instance holds, showing @mark. */
static int probe_hits(FIXTURE_DATA(fault_count) * self, const char *mark)
{
	char path[PATH_MAX + 8], line[512];
	int hits = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", self->inst);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		hits += strstr(line, ": probe: ") && (!mark || strstr(line, mark));
	fclose(f);
	return hits;
}

/* A counter of this task, in the group of @group (-1: its leader). */
static int count_open(__u32 type, __u64 config, bool user, bool kernel, int group)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config = config,
		.exclude_user = !user,
		.exclude_kernel = !kernel,
		.exclude_hv = 1,
		.disabled = group < 0,
		.read_format = PERF_FORMAT_GROUP,
	};

	return syscall(__NR_perf_event_open, &attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

FIXTURE_SETUP(fault_count)
{
	const char *why;
	struct recorder rec;
	unsigned long id[2];
	int i, ret;

	for (i = 0; i < NR_CNT; i++)
		self->cnt[i] = -1;
	self->fd = -1;
	why = no_events(_metadata);
	if (why)
		SKIP(return, "%s", why);
	for (i = 0; i < 2; i++) {
		ret = read_format(pf_events[i], &rec);
		if (ret == -ENOENT)
			SKIP(return, "%s has no perf event id", pf_events[i]);
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", pf_events[i], strerror(-ret));
		id[i] = rec.id;
	}
	if (variant->work >= WORK_NOFAULT_KERNEL_ADDR && access(TRACEFS "/dynamic_events", F_OK))
		SKIP(return, "no dynamic events (CONFIG_KPROBE_EVENTS)");

	self->cnt[CNT_SW_USER] = count_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
					    true, false, -1);
	ASSERT_LE(0, self->cnt[0]) TH_LOG("page-faults: %s", strerror(errno));
	self->cnt[CNT_SW_KERNEL] = count_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
					      false, true, self->cnt[0]);
	/* A tracepoint fires in the kernel, whatever mode the fault was in. */
	self->cnt[CNT_TP_USER] = count_open(PERF_TYPE_TRACEPOINT, id[0], true, true,
					    self->cnt[0]);
	self->cnt[CNT_TP_KERNEL] = count_open(PERF_TYPE_TRACEPOINT, id[1], true, true,
					      self->cnt[0]);
	for (i = 1; i < NR_CNT; i++)
		ASSERT_LE(0, self->cnt[i]) TH_LOG("counter %d: %s", i, strerror(errno));
}

FIXTURE_TEARDOWN(fault_count)
{
	size_t len = COUNT_PAGES * getpagesize();

	probe_stop(self);
	for (int i = 0; i < NR_CNT; i++)
		if (self->cnt[i] >= 0)
			close(self->cnt[i]);
	if (self->warm)
		munmap(self->warm, len);
	if (self->map)
		munmap(self->map, len);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(fault_count, same_count)
{
	/* strncpy_from_user_nofault() faults: "(fault)" */
	const char *mark = variant->work == WORK_KPROBE_FETCH ? "=(fault)" : NULL;
	struct { __u64 nr, val[NR_CNT]; } cnt;
	int per_mode[2] = { variant->user, variant->kernel };
	int ret, mode, hits = 0, before = 0;
	unsigned long step_ip = 0;
	char def_buf[128], filter[64];
	struct rusage ru[2];
	const char *def;
	long faults;

	if (variant->work == WORK_UACCESS)
		self->fd = new_memfd(false, COUNT_PAGES * getpagesize());
	if (variant->work == WORK_KPROBE_STEP)	/* a directory that does not change */
		self->fd = open(TRACEFS "/events/exceptions", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (variant->work == WORK_UACCESS || variant->work == WORK_KPROBE_STEP)
		ASSERT_LE(0, self->fd) TH_LOG("the work's file: %s", strerror(errno));
	/* A first round takes the faults of the code and the stack. */
	self->warm = count_map(variant->work);
	self->map = count_map(variant->work);
	ASSERT_TRUE(self->warm && self->map) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, count_work(variant->work, self->warm, self->fd, COUNT_PAGES));
	if (variant->probe_at_fault) {
		/* Count only the kernel events that name the probed instruction. */
		step_ip = step_find_ip(self->fd);
		ASSERT_TRUE(is_kernel_addr(step_ip)) TH_LOG("no kernel fault of getdents64()");
		snprintf(filter, sizeof(filter), "ip == 0x%lx", step_ip);
		ASSERT_EQ(0, ioctl(self->cnt[CNT_TP_KERNEL], PERF_EVENT_IOC_SET_FILTER, filter));
	}

	def = probe_def(variant->work, step_ip, def_buf);
	if (def) {
		ret = probe_start(self, def);
		if (ret == -EINVAL && variant->probe_at_fault)
			SKIP(return, "kprobes refuse 0x%lx (an exception table entry?)", step_ip);
		if ((ret == -EINVAL || ret == -ENOENT) && def[0] == 'e')
			SKIP(return, "no eprobes (CONFIG_EPROBE_EVENTS)");
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", def, strerror(-ret));
	}
	if (variant->probe_at_fault) {
		/* The probe's hits in a round without faults */
		count_work(variant->work, self->warm, self->fd, COUNT_PAGES);
		before = probe_hits(self, NULL);
	}
	getrusage(RUSAGE_THREAD, &ru[0]);
	ioctl(self->cnt[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	EXPECT_EQ(0, count_work(variant->work, self->map, self->fd, COUNT_PAGES));
	ioctl(self->cnt[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	getrusage(RUSAGE_THREAD, &ru[1]);
	if (def)
		hits = probe_hits(self, mark);
	probe_stop(self);

	/* Each fault hits the kprobe at the fault once more: the step faulted. */
	if (variant->probe_at_fault) {
		EXPECT_EQ(2 * before + COUNT_PAGES, hits)
			TH_LOG("%d hits in a round without faults", before);
	} else if (def) {
		EXPECT_LE(COUNT_PAGES, hits) TH_LOG("%d records of %s", hits, def);
	}
	ASSERT_EQ(sizeof(cnt), read(self->cnt[0], &cnt, sizeof(cnt)));
	ASSERT_EQ(NR_CNT, cnt.nr);

	faults = ru[1].ru_minflt - ru[0].ru_minflt + ru[1].ru_majflt - ru[0].ru_majflt;
	TH_LOG("%d accesses: events %llu/%llu, page-faults %llu/%llu (user/kernel), rusage %ld",
	       COUNT_PAGES, cnt.val[CNT_TP_USER], cnt.val[CNT_TP_KERNEL],
	       cnt.val[CNT_SW_USER], cnt.val[CNT_SW_KERNEL], faults);
	if (variant->rusage > 0)
		EXPECT_EQ(cnt.val[CNT_TP_USER] + cnt.val[CNT_TP_KERNEL], faults);
	if (variant->rusage < 0)
		EXPECT_GT(COUNT_PAGES, faults);
	/*
	 * At least one event per access where the kind is reported, fewer
	 * where it is not (other faults may happen). perf counts the same,
	 * or fewer than one per access where it does not count the kind.
	 */
	for (mode = 0; mode < 2; mode++) {
		__u64 events = cnt.val[CNT_TP_USER + mode];
		__u64 counted = cnt.val[CNT_SW_USER + mode];
		bool skips = mode ? variant->perf_skips_kernel : variant->perf_skips_user;

		EXPECT_TRUE(skips ? counted < COUNT_PAGES : counted == events)
			TH_LOG("%s: %llu events, %llu page-faults", pf_events[mode], events,
			       counted);
		if (per_mode[mode])
			EXPECT_EQ(per_mode[mode] > 0, events >= COUNT_PAGES)
				TH_LOG("%s: %llu events", pf_events[mode], events);
	}
}

TEST_HARNESS_MAIN
