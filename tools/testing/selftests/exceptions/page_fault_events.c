// SPDX-License-Identifier: GPL-2.0
/*
 * Check the exceptions:page_fault_user and exceptions:page_fault_kernel
 * tracepoints: trigger page faults with a known address, instruction
 * pointer and access type and verify what the events report.
 *
 * Each variant of the page_fault fixture describes one kind of fault: how
 * the memory is mapped and prepared, which task accesses it and how, and
 * the error code the events must decode to. The events are read as a
 * perf_event_open() tracepoint event samples them, each with its raw
 * record decoded with the layout tracefs describes. (What tracefs prints
 * is ftracetest's test.d/event/page-fault-events.tc.)
 *
 * The fault_count fixture counts the events and the perf software page
 * fault event for the same workload, in user and in kernel mode, for each
 * kind of fault that Documentation/trace/events-page-fault.rst describes:
 * perf counts the faults the events report, except those taken with page
 * faults disabled (and, on x86, those on kernel addresses), which it has
 * never counted.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif

#define USER_MAP_ADDR		0xcafe0000UL
#define USER_MAP_PAGES		16
#define KERNEL_BUF_PAGES	4
#define MAX_EVENTS		1024

/* Pages of the perf ring buffer, after its control page. */
#define PERF_DATA_PAGES		8

/*
 * The faulting load or store must be inside the access function. These are
 * short loops, far smaller than this; the bound only has to stop an ip
 * elsewhere in the binary from being accepted.
 */
#define ACCESS_FN_MAX_SIZE	256

/* A return instruction, the code of the pages of the exec variant. */
#if defined(__aarch64__)
static const unsigned char ret_insn[] = { 0xc0, 0x03, 0x5f, 0xd6 };
#elif defined(__x86_64__) || defined(__i386__)
static const unsigned char ret_insn[] = { 0xc3 };
#elif defined(__riscv)
static const unsigned char ret_insn[] = { 0x67, 0x80, 0x00, 0x00 };
#else
static const unsigned char ret_insn[] = { };
#endif

/* What an error code says about a fault, as far as the test is concerned. */
struct pf_error {
	bool user;	/* taken in user mode */
	bool write;	/* a data write */
	bool exec;	/* an instruction fetch */
	bool present;	/* the page was mapped: the access rights refused it */
};

/* Which fields of struct pf_error an error code encodes. */
#define PF_USER		0x1
#define PF_WRITE	0x2
#define PF_EXEC		0x4
#define PF_PRESENT	0x8

/*
 * Decode the error code of a page fault event into @pe. Returns the mask
 * of the fields the error code encodes, 0 if it is not a page fault error
 * code this test knows.
 */
#if defined(__aarch64__)
static const bool have_decoder = true;

static unsigned int decode_error_code(unsigned long esr, struct pf_error *pe)
{
	unsigned long ec = (esr >> 26) & 0x3f;	/* ESR_ELx.EC */
	unsigned long fsc = esr & 0x3f;		/* ESR_ELx.ISS.{D,I}FSC */

	switch (ec) {
	case 0x20:	/* instruction abort from a lower EL */
	case 0x21:	/* instruction abort from the same EL */
		pe->exec = true;
		pe->write = false;
		break;
	case 0x24:	/* data abort from a lower EL */
	case 0x25:	/* data abort from the same EL */
		pe->exec = false;
		pe->write = esr & (1UL << 6);	/* ESR_ELx.ISS.WnR */
		break;
	default:
		return 0;
	}
	pe->user = !(ec & 1);

	/* Translation fault, level 0 to 3 or -1 (0x2b) */
	if ((fsc >= 0x04 && fsc <= 0x07) || fsc == 0x2b)
		pe->present = false;
	/* Access flag fault (0x08-0x0b) or permission fault (0x0c-0x0f) */
	else if (fsc >= 0x08 && fsc <= 0x0f)
		pe->present = true;
	else
		return 0;
	return PF_USER | PF_WRITE | PF_EXEC | PF_PRESENT;
}
#elif defined(__x86_64__) || defined(__i386__)
static const bool have_decoder = true;

static unsigned int decode_error_code(unsigned long err, struct pf_error *pe)
{
	/* X86_PF_PROT, X86_PF_WRITE, X86_PF_USER, X86_PF_RSVD, X86_PF_INSTR */
	if (err & 0x8)
		return 0;
	pe->present = err & 0x1;
	pe->write = err & 0x2;
	pe->user = err & 0x4;
	pe->exec = err & 0x10;
	return PF_USER | PF_WRITE | PF_EXEC | PF_PRESENT;
}
#elif defined(__riscv)
static const bool have_decoder = true;

static unsigned int decode_error_code(unsigned long cause, struct pf_error *pe)
{
	/* scause: the mode and the reason are not encoded */
	switch (cause) {
	case 12:	/* instruction page fault */
		pe->exec = true;
		pe->write = false;
		break;
	case 13:	/* load page fault */
		pe->exec = false;
		pe->write = false;
		break;
	case 15:	/* store/AMO page fault */
		pe->exec = false;
		pe->write = true;
		break;
	default:
		return 0;
	}
	return PF_WRITE | PF_EXEC;
}
#else
static const bool have_decoder;

static unsigned int decode_error_code(unsigned long err, struct pf_error *pe)
{
	return 0;
}
#endif

/* Format the @known fields of @pe, "?" for the others. */
static const char *format_error(char *buf, size_t size, const struct pf_error *pe,
				unsigned int known)
{
	snprintf(buf, size, "user=%c write=%c exec=%c present=%c",
		 known & PF_USER ? '0' + pe->user : '?',
		 known & PF_WRITE ? '0' + pe->write : '?',
		 known & PF_EXEC ? '0' + pe->exec : '?',
		 known & PF_PRESENT ? '0' + pe->present : '?');
	return buf;
}

static bool error_matches(const struct pf_error *got, const struct pf_error *want,
			  unsigned int known)
{
	return (!(known & PF_USER) || got->user == want->user) &&
	       (!(known & PF_WRITE) || got->write == want->write) &&
	       (!(known & PF_EXEC) || got->exec == want->exec) &&
	       (!(known & PF_PRESENT) || got->present == want->present);
}

struct pf_event {
	unsigned long address;
	unsigned long ip;
	unsigned long error_code;
	int pid;		/* the faulting task, as the tracepoint saw it */
	/* PERF_SAMPLE_TID and PERF_SAMPLE_IP */
	int sample_pid;
	int sample_tid;
	unsigned long sample_ip;
};

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

/* Kernel addresses are in the upper half of the address space. */
static bool is_kernel_addr(unsigned long addr)
{
	return addr >> (sizeof(long) * CHAR_BIT - 1);
}

/*
 * The access functions: each accesses the first byte of @nr pages @step
 * bytes apart and is the faulting code of the user mode variants. They
 * are only called through call_access_fn(), so they are never inlined and
 * the accesses run inside them.
 */
static long access_read(char *p, size_t nr, size_t step, int fd)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		char c = p[i * step];

		/* Keep exactly one load per page. */
		asm volatile("" : : "r" (c) : "memory");
	}
	return 0;
}

static long access_write(char *p, size_t nr, size_t step, int fd)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		p[i * step] = 1;
		/* Keep exactly one store per page. */
		asm volatile("" : : : "memory");
	}
	return 0;
}

/* Call the code at the start of each page: a return instruction. */
static long access_exec(char *p, size_t nr, size_t step, int fd)
{
	size_t i;

	for (i = 0; i < nr; i++)
		((void (*)(void))(p + i * step))();
	return 0;
}

/* Copy the start of @fd over the pages: the kernel writes them. */
static long access_uaccess(char *p, size_t nr, size_t step, int fd)
{
	return pread(fd, p, nr * step, 0);
}

/*
 * Call @fn through a pointer the compiler cannot see through, so it can
 * neither inline it nor call a specialised copy at another address.
 */
static long call_access_fn(long (*fn)(char *p, size_t nr, size_t step, int fd),
			   char *p, size_t nr, size_t step, int fd)
{
	asm volatile("" : "+r" (fn));
	return fn(p, nr, step, fd);
}

/* How the memory the faults are checked in is mapped. */
enum backing {
	BACKING_ANON,		/* private anonymous, read-write */
	BACKING_ANON_NONE,	/* private anonymous, PROT_NONE */
	BACKING_FILE_PRIVATE,	/* MAP_PRIVATE of a memfd without pages */
	BACKING_FILE_SHARED,	/* MAP_SHARED of a memfd without pages */
	BACKING_FILE_EXEC,	/* PROT_READ | PROT_EXEC of a memfd of code */
};

/* What is done to the memory before recording starts. */
enum prepare {
	PREPARE_NONE,
	PREPARE_READ,		/* read every page */
	PREPARE_WRITE,		/* write every page */
};

/* Which task performs the access. */
enum actor {
	ACTOR_SELF,		/* the test itself */
	ACTOR_CHILD,		/* a child forked after the preparation */
	ACTOR_THREAD,		/* a second thread of the test */
};

/* The access that is recorded, one per page. */
enum access_type {
	ACCESS_READ,
	ACCESS_WRITE,
	ACCESS_EXEC,
	ACCESS_UACCESS,		/* read() into the pages */
};

struct trace_instance {
	char dir[PATH_MAX];	/* empty when there is no instance */
	const char *tracefs;
	bool mounted;
};

FIXTURE(page_fault)
{
	struct trace_instance inst;
};

FIXTURE_VARIANT(page_fault)
{
	enum backing backing;
	unsigned long addr;	/* fixed address of the mapping, or 0 */
	unsigned int nr_pages;
	enum prepare prepare;
	enum actor actor;
	enum access_type access;
	bool sigsegv;		/* every access ends in SIGSEGV */
	/* What every error code must say; .user selects the event. */
	struct pf_error want;
};

/* The first read of anonymous memory maps the zero page. */
FIXTURE_VARIANT_ADD(page_fault, anon_read)
{
	.backing = BACKING_ANON,
	.nr_pages = 16,
	.access = ACCESS_READ,
	.want = { .user = true },
};

/* Writing over the zero page faults again, on a present page. */
FIXTURE_VARIANT_ADD(page_fault, anon_write_after_read)
{
	.backing = BACKING_ANON,
	.nr_pages = 16,
	.prepare = PREPARE_READ,
	.access = ACCESS_WRITE,
	.want = { .user = true, .write = true, .present = true },
};

/*
 * The first write of anonymous memory, at a fixed address so that the
 * addresses in the trace are known in advance.
 */
FIXTURE_VARIANT_ADD(page_fault, user_write)
{
	.backing = BACKING_ANON,
	.addr = USER_MAP_ADDR,
	.nr_pages = USER_MAP_PAGES,
	.access = ACCESS_WRITE,
	.want = { .user = true, .write = true },
};

/*
 * After fork() the pages are write-protected in both processes: a write
 * in the child faults on a present page to copy it. (fork() also makes the
 * child's PTEs old: an arm64 CPU without hardware access flag updates
 * reports an access flag fault rather than a permission fault, which the
 * decoder also counts as present.)
 */
FIXTURE_VARIANT_ADD(page_fault, cow_write)
{
	.backing = BACKING_ANON,
	.nr_pages = 16,
	.prepare = PREPARE_WRITE,
	.actor = ACTOR_CHILD,
	.access = ACCESS_WRITE,
	.want = { .user = true, .write = true, .present = true },
};

/*
 * A read of a private file mapping. The file has no pages yet: read
 * fault-around only maps pages already in the page cache, so every page
 * faults on its own.
 */
FIXTURE_VARIANT_ADD(page_fault, file_private_read)
{
	.backing = BACKING_FILE_PRIVATE,
	.nr_pages = 16,
	.access = ACCESS_READ,
	.want = { .user = true },
};

/*
 * A write to a shared file mapping that was never read: write faults do
 * no fault-around and find no PTE.
 */
FIXTURE_VARIANT_ADD(page_fault, file_shared_write)
{
	.backing = BACKING_FILE_SHARED,
	.nr_pages = 16,
	.access = ACCESS_WRITE,
	.want = { .user = true, .write = true },
};

/*
 * An instruction fetch from a page of code that was written with write(),
 * never through this mapping, so the first access is the fetch. A single
 * page: fault-around would map the other pages of the file.
 */
FIXTURE_VARIANT_ADD(page_fault, exec)
{
	.backing = BACKING_FILE_EXEC,
	.nr_pages = 1,
	.access = ACCESS_EXEC,
	.want = { .user = true, .exec = true },
};

/* The event is emitted before the access is refused with SIGSEGV. */
FIXTURE_VARIANT_ADD(page_fault, prot_none_read)
{
	.backing = BACKING_ANON_NONE,
	.nr_pages = 4,
	.access = ACCESS_READ,
	.sigsegv = true,
	.want = { .user = true },
};

/* The kernel writing to user memory that was never touched. */
FIXTURE_VARIANT_ADD(page_fault, kernel_write_to_user)
{
	.backing = BACKING_ANON,
	.nr_pages = KERNEL_BUF_PAGES,
	.access = ACCESS_UACCESS,
	.want = { .write = true },
};

/* The faults of a second thread carry its thread id. */
FIXTURE_VARIANT_ADD(page_fault, thread_write)
{
	.backing = BACKING_ANON,
	.nr_pages = 16,
	.actor = ACTOR_THREAD,
	.access = ACCESS_WRITE,
	.want = { .user = true, .write = true },
};

#define TRACEFS_MOUNT	"/sys/kernel/tracing"

static bool find_tracefs(struct trace_instance *inst)
{
	inst->tracefs = TRACEFS_MOUNT;
	if (!access(TRACEFS_MOUNT "/events", F_OK))
		return true;
	inst->mounted = !mount("nodev", TRACEFS_MOUNT, "tracefs", 0, NULL);
	return inst->mounted;
}

static bool has_event(struct trace_instance *inst, const char *event)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/exceptions/%s", inst->tracefs, event);
	return !access(path, F_OK);
}

/* Disable the instance's events and remove it, if there is one. */
static void delete_instance(struct trace_instance *inst)
{
	if (!inst->dir[0])
		return;
	write_file(inst->dir, "events/enable", "0");
	if (rmdir(inst->dir))
		fprintf(stderr, "# cannot remove %s: %s\n", inst->dir, strerror(errno));
	inst->dir[0] = '\0';
}

/* Remove the instance and unmount tracefs if we mounted it. */
static void remove_instance(struct trace_instance *inst)
{
	delete_instance(inst);
	if (inst->mounted) {
		umount(TRACEFS_MOUNT);
		inst->mounted = false;
	}
}

/* Create an instance of the test's own. */
static int create_instance(struct trace_instance *inst)
{
	snprintf(inst->dir, sizeof(inst->dir), "%s/instances/selftest_page_fault_%d",
		 inst->tracefs, getpid());
	if (!mkdir(inst->dir, 0700))
		return 0;
	inst->dir[0] = '\0';
	return -errno;
}

/* Where the fields of an event are in its raw record. */
struct tp_field {
	int offset;
	int size;
};

struct tp_format {
	unsigned long id;
	struct tp_field common_type;
	struct tp_field common_pid;
	struct tp_field address;
	struct tp_field ip;
	struct tp_field error_code;
};

/* Read the id and the field layout of @event from tracefs. */
static int read_tp_format(const char *tracefs, const char *event, struct tp_format *fmt)
{
	static const char * const names[] = {
		"common_type", "common_pid", "address", "ip", "error_code",
	};
	struct tp_field *fields[] = {
		&fmt->common_type, &fmt->common_pid, &fmt->address, &fmt->ip,
		&fmt->error_code,
	};
	unsigned int i, found = 0;
	char path[PATH_MAX];
	char *line = NULL, *p = NULL, *semi, *name, *offset, *size;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/exceptions/%s/id", tracefs, event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (getline(&line, &len, f) > 0)
		fmt->id = strtoul(line, &p, 10);
	fclose(f);
	if (!p || p == line) {
		free(line);
		return -EINVAL;
	}

	snprintf(path, sizeof(path), "%s/events/exceptions/%s/format", tracefs, event);
	f = fopen(path, "re");
	if (!f) {
		free(line);
		return -errno;
	}
	/* Lines like "field:unsigned long address;	offset:8;	size:8;	signed:0;" */
	while (getline(&line, &len, f) > 0) {
		p = strstr(line, "field:");
		semi = p ? strchr(p, ';') : NULL;
		offset = semi ? strstr(semi, "offset:") : NULL;
		size = offset ? strstr(offset, "size:") : NULL;
		if (!size)
			continue;
		name = semi;
		while (name > p && (name[-1] == '_' || isalnum((unsigned char)name[-1])))
			name--;
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			if (strlen(names[i]) != (size_t)(semi - name) ||
			    strncmp(names[i], name, semi - name))
				continue;
			fields[i]->offset = strtol(offset + strlen("offset:"), NULL, 10);
			fields[i]->size = strtol(size + strlen("size:"), NULL, 10);
			found |= 1U << i;
		}
	}
	free(line);
	fclose(f);

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		int sz = fields[i]->size;

		if (!(found & (1U << i)) || fields[i]->offset < 0 ||
		    (sz != 1 && sz != 2 && sz != 4 && sz != 8))
			return -EINVAL;
	}
	return 0;
}

/* Read a field of a raw record of at least @field->offset + @field->size bytes. */
static unsigned long raw_field(const unsigned char *raw, const struct tp_field *field)
{
	__u64 v64;
	__u32 v32;
	__u16 v16;

	switch (field->size) {
	case 8:
		memcpy(&v64, raw + field->offset, sizeof(v64));
		return v64;
	case 4:
		memcpy(&v32, raw + field->offset, sizeof(v32));
		return v32;
	case 2:
		memcpy(&v16, raw + field->offset, sizeof(v16));
		return v16;
	default:
		return raw[field->offset];
	}
}

static bool raw_has(size_t raw_size, const struct tp_field *field)
{
	return (size_t)field->offset + field->size <= raw_size;
}

/* A perf tracepoint event of one task, sampling every event with its raw record. */
struct recorder {
	const char *event;	/* page_fault_user or page_fault_kernel */
	struct tp_format fmt;
	int fd;
	struct perf_event_mmap_page *ring;
	size_t ring_len;
	unsigned char *data;
	__u64 data_size;
	__u64 lost;
};

static int perf_open(struct recorder *rec, pid_t pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = rec->fmt.id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW,
		.disabled = 1,
	};

	return syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Copy @len bytes at position @pos of the ring, which may wrap around its end. */
static void ring_copy(const struct recorder *rec, __u64 pos, void *dst, size_t len)
{
	size_t off = pos & (rec->data_size - 1);
	size_t first = len < rec->data_size - off ? len : rec->data_size - off;

	memcpy(dst, rec->data + off, first);
	memcpy((char *)dst + first, rec->data, len - first);
}

/* A PERF_RECORD_SAMPLE of PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW */
static bool parse_sample(const struct tp_format *fmt, const unsigned char *s, size_t size,
			 struct pf_event *ev)
{
	size_t off = sizeof(struct perf_event_header);
	const unsigned char *raw;
	__u32 pid, tid, raw_size;
	__u64 ip;

	if (size < off + sizeof(ip) + sizeof(pid) + sizeof(tid) + sizeof(raw_size))
		return false;
	memcpy(&ip, s + off, sizeof(ip));
	off += sizeof(ip);
	memcpy(&pid, s + off, sizeof(pid));
	off += sizeof(pid);
	memcpy(&tid, s + off, sizeof(tid));
	off += sizeof(tid);
	memcpy(&raw_size, s + off, sizeof(raw_size));
	off += sizeof(raw_size);
	if (raw_size > size - off)
		return false;
	raw = s + off;

	if (!raw_has(raw_size, &fmt->common_type) || !raw_has(raw_size, &fmt->common_pid) ||
	    !raw_has(raw_size, &fmt->address) || !raw_has(raw_size, &fmt->ip) ||
	    !raw_has(raw_size, &fmt->error_code))
		return false;
	if (raw_field(raw, &fmt->common_type) != fmt->id)
		return false;

	memset(ev, 0, sizeof(*ev));
	ev->address = raw_field(raw, &fmt->address);
	ev->ip = raw_field(raw, &fmt->ip);
	ev->error_code = raw_field(raw, &fmt->error_code);
	ev->pid = (int)raw_field(raw, &fmt->common_pid);
	ev->sample_pid = pid;
	ev->sample_tid = tid;
	ev->sample_ip = ip;
	return true;
}

/*
 * Consume the records between data_tail and data_head, keeping the samples
 * in @evs. Returns the number of samples, or -1 if a record could not be
 * parsed or there were more than @max samples.
 */
static int perf_collect(struct recorder *rec, struct pf_event *evs, int max)
{
	struct perf_event_header hdr;
	unsigned char buf[512];
	__u64 head, tail;
	int nr = 0;

	/* Read the records only after seeing the head that covers them. */
	head = __atomic_load_n(&rec->ring->data_head, __ATOMIC_ACQUIRE);
	tail = rec->ring->data_tail;
	while (tail < head) {
		if (head - tail < sizeof(hdr)) {
			nr = -1;
			break;
		}
		ring_copy(rec, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail || hdr.size > sizeof(buf)) {
			nr = -1;
			break;
		}
		ring_copy(rec, tail, buf, hdr.size);
		if (hdr.type == PERF_RECORD_SAMPLE) {
			if (nr == max || !parse_sample(&rec->fmt, buf, hdr.size, &evs[nr])) {
				nr = -1;
				break;
			}
			nr++;
		} else if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16) {
			__u64 lost;

			/* struct { header; u64 id; u64 lost; } */
			memcpy(&lost, buf + sizeof(hdr) + 8, sizeof(lost));
			rec->lost += lost;
		}
		tail += hdr.size;
	}
	/* Hand the space back only once the records are copied out. */
	__atomic_store_n(&rec->ring->data_tail, tail, __ATOMIC_RELEASE);
	return nr;
}

/* Start recording the faults of task @tid (this process or its child or thread). */
static int recorder_start(struct recorder *rec, pid_t tid)
{
	rec->ring_len = (1 + PERF_DATA_PAGES) * getpagesize();
	rec->fd = perf_open(rec, tid == getpid() ? 0 : tid);
	if (rec->fd < 0)
		return -errno;
	rec->ring = mmap(NULL, rec->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, rec->fd, 0);
	if (rec->ring == MAP_FAILED) {
		rec->ring = NULL;
		return -errno;
	}
	rec->data = (unsigned char *)rec->ring + rec->ring->data_offset;
	rec->data_size = rec->ring->data_size;
	return ioctl(rec->fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0;
}

static void recorder_stop(struct recorder *rec)
{
	if (rec->fd >= 0)
		ioctl(rec->fd, PERF_EVENT_IOC_DISABLE, 0);
}

static void recorder_release(struct recorder *rec)
{
	if (rec->ring)
		munmap(rec->ring, rec->ring_len);
	if (rec->fd >= 0)
		close(rec->fd);
	rec->ring = NULL;
	rec->fd = -1;
}

/* The access to perform, shared with the task that performs it. */
struct access {
	long (*fn)(char *p, size_t nr, size_t step, int fd);
	char *start;
	size_t nr;
	size_t step;
	int fd;			/* the data of ACCESS_UACCESS */
	bool one_by_one;	/* every access ends in SIGSEGV */
	int ready[2];		/* the actor sends its tid */
	int go[2];		/* and waits for a byte */
	/* Results */
	long ret;
	unsigned int signals;
	unsigned int wrong_si_addr;
};

static sigjmp_buf segv_env;
static void *segv_addr;

static void segv_handler(int sig, siginfo_t *info, void *ucontext)
{
	segv_addr = info->si_addr;
	siglongjmp(segv_env, 1);
}

static void do_access(struct access *a)
{
	struct sigaction sa = {
		.sa_sigaction = segv_handler,
		.sa_flags = SA_SIGINFO,
	}, old;
	size_t i;

	if (!a->one_by_one) {
		a->ret = call_access_fn(a->fn, a->start, a->nr, a->step, a->fd);
		return;
	}

	sigaction(SIGSEGV, &sa, &old);
	for (i = 0; i < a->nr; i++) {
		char *p = a->start + i * a->step;

		if (!sigsetjmp(segv_env, 1)) {
			call_access_fn(a->fn, p, 1, a->step, a->fd);
			continue;
		}
		a->signals++;
		if (segv_addr != p)
			a->wrong_si_addr++;
	}
	sigaction(SIGSEGV, &old, NULL);
}

/* A child or a second thread: send the tid, wait for the go, access. */
static int actor_run(struct access *a)
{
	pid_t tid = syscall(SYS_gettid);
	char go;

	if (write(a->ready[1], &tid, sizeof(tid)) != sizeof(tid))
		return 1;
	if (read(a->go[0], &go, 1) != 1)
		return 1;
	do_access(a);
	return 0;
}

static void *actor_thread(void *arg)
{
	actor_run(arg);
	return NULL;
}

/*
 * Have @actor perform the access while @rec records. Returns the tid and
 * the tgid of the task that accessed in @tid and @tgid.
 */
static void run_actor(struct __test_metadata *_metadata, enum actor actor,
		      struct recorder *rec, struct access *a, pid_t *tid, pid_t *tgid)
{
	pthread_t thread = 0;
	pid_t child = 0;
	int ret, status = 0;
	bool waited;

	if (actor == ACTOR_SELF) {
		*tid = *tgid = getpid();
		ret = recorder_start(rec, *tid);
		if (!ret)
			do_access(a);
		recorder_stop(rec);
		ASSERT_EQ(0, ret) TH_LOG("cannot record: %s", strerror(-ret));
		return;
	}

	ASSERT_EQ(0, pipe2(a->ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(a->go, O_CLOEXEC));
	if (actor == ACTOR_CHILD) {
		child = fork();
		ASSERT_LE(0, child);
		if (!child)
			_exit(actor_run(a));
		close(a->ready[1]);
		*tgid = child;
	} else {
		ASSERT_EQ(0, pthread_create(&thread, NULL, actor_thread, a));
		*tgid = getpid();
	}

	ret = -EIO;
	if (read(a->ready[0], tid, sizeof(*tid)) == sizeof(*tid))
		ret = recorder_start(rec, *tid);
	if (!ret && write(a->go[1], "g", 1) != 1)
		ret = -EIO;
	/* Without the go, the actor returns without accessing anything. */
	close(a->go[1]);
	if (child)
		waited = waitpid(child, &status, 0) == child;
	else
		waited = !pthread_join(thread, NULL);
	recorder_stop(rec);
	close(a->go[0]);
	close(a->ready[0]);
	if (actor == ACTOR_THREAD)
		close(a->ready[1]);

	ASSERT_TRUE(waited);
	ASSERT_EQ(0, ret) TH_LOG("cannot record task %d: %s", *tid, strerror(-ret));
	if (child) {
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("child exited with status 0x%x", status);
	}
}

/*
 * A memfd that says whether it may be executable, as vm.memfd_noexec = 2
 * requires. Kernels before 6.3 know neither flag: their memfds are
 * executable.
 */
static int new_memfd(bool exec)
{
	int fd = memfd_create("page_fault_events",
			      MFD_CLOEXEC | (exec ? MFD_EXEC : MFD_NOEXEC_SEAL));

	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("page_fault_events", MFD_CLOEXEC);
	return fd;
}

/* A memfd of @len bytes for @backing: sparse, or a return instruction per page. */
static int target_memfd(enum backing backing, size_t len, size_t page_size)
{
	size_t off;
	int fd;

	fd = new_memfd(backing == BACKING_FILE_EXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, len))
		goto err;
	if (backing != BACKING_FILE_EXEC)
		return fd;
	/*
	 * write() the code: storing it through a mapping would map the page,
	 * and so would __builtin___clear_cache() on it.
	 */
	for (off = 0; off < len; off += page_size) {
		if (pwrite(fd, ret_insn, sizeof(ret_insn), off) != sizeof(ret_insn))
			goto err;
	}
	return fd;
err:
	close(fd);
	return -1;
}

/* The data ACCESS_UACCESS copies: a memfd of @len bytes, also returned in @data. */
static int uaccess_memfd(size_t len, char **data)
{
	size_t off;
	int fd;

	*data = malloc(len);
	if (!*data)
		return -1;
	for (off = 0; off < len; off++)
		(*data)[off] = off * 7 + 3;
	fd = new_memfd(false);
	if (fd >= 0 && write(fd, *data, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Check one event of the range; @n is its index, @first_ip the ip of the first one. */
static void check_event(struct __test_metadata *_metadata, enum access_type access,
			const struct pf_error *want, const struct access *a,
			const struct pf_event *ev, unsigned int n, unsigned long *first_ip,
			pid_t tid, pid_t tgid)
{
	unsigned long page = (unsigned long)a->start + n * a->step;
	unsigned long fn = (unsigned long)a->fn;
	unsigned long address = ev->address;
	char got_text[64], want_text[64];
	struct pf_error got = {};
	unsigned int known;

	/* The copy routines of the kernel may start to fault anywhere in the page. */
	if (access == ACCESS_UACCESS)
		address &= ~(a->step - 1);
	EXPECT_EQ(page, address)
		TH_LOG("event %u at 0x%lx, not in page 0x%lx", n, ev->address, page);
	EXPECT_EQ(tid, ev->pid) TH_LOG("event at 0x%lx from task %d, not %d",
				       ev->address, ev->pid, tid);
	EXPECT_EQ(tid, ev->sample_tid);
	EXPECT_EQ(tgid, ev->sample_pid);
	EXPECT_TRUE(is_kernel_addr(ev->sample_ip))
		TH_LOG("sample ip 0x%lx is not in the kernel", ev->sample_ip);

	switch (access) {
	case ACCESS_UACCESS:
		EXPECT_TRUE(is_kernel_addr(ev->ip)) TH_LOG("ip 0x%lx is not in the kernel", ev->ip);
		break;
	case ACCESS_EXEC:
		/* The fetch faults: the ip is the address. */
		EXPECT_EQ(ev->address, ev->ip);
		break;
	default:
		EXPECT_GE(ev->ip, fn);
		EXPECT_LT(ev->ip, fn + ACCESS_FN_MAX_SIZE)
			TH_LOG("ip 0x%lx not in the access function at 0x%lx", ev->ip, fn);
		/* A single instruction faults, always the same. */
		if (!n)
			*first_ip = ev->ip;
		EXPECT_EQ(*first_ip, ev->ip);
		break;
	}

	if (!have_decoder)
		return;
	known = decode_error_code(ev->error_code, &got);
	EXPECT_TRUE(known && error_matches(&got, want, known))
		TH_LOG("error_code 0x%lx: %s, want %s", ev->error_code,
		       known ? format_error(got_text, sizeof(got_text), &got, known) :
			       "not a page fault error code",
		       format_error(want_text, sizeof(want_text), want,
				    known ? known : PF_USER | PF_WRITE | PF_EXEC | PF_PRESENT));
}

/* The events in the range must be one per page, in order, from the actor. */
static void check_events(struct __test_metadata *_metadata,
			 enum access_type access, const struct pf_error *want,
			 const struct access *a, const struct pf_event *evs, int nr,
			 pid_t tid, pid_t tgid)
{
	unsigned long start = (unsigned long)a->start, end = start + a->nr * a->step;
	unsigned long first_ip = 0;
	unsigned int n = 0;
	int i;

	for (i = 0; i < nr; i++) {
		/* Other faults of these tasks (stack, text) may be recorded: skip them. */
		if (evs[i].address < start || evs[i].address >= end)
			continue;
		check_event(_metadata, access, want, a, &evs[i], n, &first_ip, tid, tgid);
		n++;
	}
	EXPECT_EQ(a->nr, n) TH_LOG("%u events in [0x%lx, 0x%lx), want %zu",
				   n, start, end, a->nr);
	if (n != a->nr || _metadata->exit_code) {
		for (i = 0; i < nr; i++)
			TH_LOG("event %d: pid=%d address=0x%lx ip=0x%lx error_code=0x%lx",
			       i, evs[i].pid, evs[i].address, evs[i].ip,
			       evs[i].error_code);
	}
}

/*
 * What the child that performs the access shares with the test: the
 * access @variant names, over the pages at @map. NULL if it cannot be
 * mapped.
 */
static struct access *shared_access(const FIXTURE_VARIANT(page_fault) * variant,
				    char *map, size_t page_size)
{
	static long (* const access_fns[])(char *p, size_t nr, size_t step, int fd) = {
		[ACCESS_READ] = access_read,
		[ACCESS_WRITE] = access_write,
		[ACCESS_EXEC] = access_exec,
		[ACCESS_UACCESS] = access_uaccess,
	};
	struct access *a;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return NULL;
	a->fn = access_fns[variant->access];
	a->start = map;
	a->nr = variant->nr_pages;
	a->step = page_size;
	a->fd = -1;
	a->one_by_one = variant->sigsegv;
	return a;
}

/*
 * What the access itself must have done: one SIGSEGV per page where the
 * variant expects them, with the address of the fault; for a uaccess
 * read(), all of @data copied to the pages at @map.
 */
static void check_access(struct __test_metadata *_metadata,
			 const FIXTURE_VARIANT(page_fault) * variant,
			 const struct access *a, const char *map, const char *data, size_t len)
{
	EXPECT_EQ(variant->sigsegv ? variant->nr_pages : 0, a->signals);
	EXPECT_EQ(0, a->wrong_si_addr) TH_LOG("SIGSEGV with another si_addr");
	if (variant->access == ACCESS_UACCESS) {
		EXPECT_EQ((long)len, a->ret);
		EXPECT_EQ(0, memcmp(map, data, len));
	}
}

/*
 * The body of both tests: set up the memory as @variant describes it,
 * perform the access while @rec records, and check the events.
 */
static void run_case(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(page_fault) * variant, struct recorder *rec)
{
	size_t page_size = getpagesize();
	size_t len = variant->nr_pages * page_size;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE, fd = -1;
	struct pf_event *evs;
	char *map, *data = NULL;
	struct access *a;
	pid_t tid, tgid;
	int nr;

	if (variant->backing == BACKING_FILE_EXEC && !sizeof(ret_insn))
		SKIP(return, "no return instruction known for this architecture");

	switch (variant->backing) {
	case BACKING_ANON:
	case BACKING_ANON_NONE:
		flags |= MAP_ANONYMOUS;
		if (variant->backing == BACKING_ANON_NONE)
			prot = PROT_NONE;
		break;
	default:
		fd = target_memfd(variant->backing, len, page_size);
		/* vm.memfd_noexec = 2 refuses MFD_EXEC (EACCES) */
		if (fd < 0 && errno == EACCES && variant->backing == BACKING_FILE_EXEC)
			SKIP(return, "vm.memfd_noexec forbids executable memfds");
		ASSERT_LE(0, fd) TH_LOG("cannot create a memfd: %s", strerror(errno));
		if (variant->backing == BACKING_FILE_SHARED)
			flags = MAP_SHARED;
		if (variant->backing == BACKING_FILE_EXEC)
			prot = PROT_READ | PROT_EXEC;
		break;
	}
	if (variant->addr)
		flags |= MAP_FIXED_NOREPLACE;

	map = mmap((void *)variant->addr, len, prot, flags, fd, 0);
	if (map == MAP_FAILED && variant->addr && errno == EEXIST)
		SKIP(return, "address 0x%lx is already mapped", variant->addr);
	if (map == MAP_FAILED && (prot & PROT_EXEC) && (errno == EPERM || errno == EACCES))
		SKIP(return, "cannot map a memfd executable: %s", strerror(errno));
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	if (variant->addr && map != (char *)variant->addr) {
		/* Kernels without MAP_FIXED_NOREPLACE treat the address as a hint. */
		munmap(map, len);
		SKIP(return, "cannot map at 0x%lx", variant->addr);
	}
	/* One fault per page: no huge pages, no large folios. */
	madvise(map, len, MADV_NOHUGEPAGE);

	if (variant->prepare != PREPARE_NONE) {
		call_access_fn(variant->prepare == PREPARE_READ ? access_read : access_write,
			       map, variant->nr_pages, page_size, -1);
	}

	a = shared_access(variant, map, page_size);
	ASSERT_NE(NULL, a);
	if (variant->access == ACCESS_UACCESS) {
		a->fd = uaccess_memfd(len, &data);
		ASSERT_LE(0, a->fd) TH_LOG("cannot create a memfd: %s", strerror(errno));
	}

	evs = calloc(MAX_EVENTS, sizeof(*evs));
	ASSERT_NE(NULL, evs);

	/* Fault in the code of the access function before recording starts. */
	call_access_fn(a->fn, map, 0, page_size, a->fd);

	run_actor(_metadata, variant->actor, rec, a, &tid, &tgid);

	nr = perf_collect(rec, evs, MAX_EVENTS);
	ASSERT_GE(nr, 0) TH_LOG("cannot read or parse the perf records");
	check_events(_metadata, variant->access, &variant->want, a, evs, nr, tid, tgid);
	EXPECT_EQ(0, rec->lost) TH_LOG("the perf ring buffer lost records");

	check_access(_metadata, variant, a, map, data, len);
	if (a->fd >= 0)
		close(a->fd);

	free(data);
	free(evs);
	munmap(a, sizeof(*a));
	munmap(map, len);
	if (fd >= 0)
		close(fd);
}

/*
 * The teardown only runs once the setup succeeded, so the setup cleans up
 * after itself before skipping or failing.
 */
FIXTURE_SETUP(page_fault)
{
	bool user, kernel;

	if (geteuid())
		SKIP(return, "must be run as root");
	if (!find_tracefs(&self->inst)) {
		remove_instance(&self->inst);
		SKIP(return, "tracefs is not available");
	}
	user = has_event(&self->inst, "page_fault_user");
	kernel = has_event(&self->inst, "page_fault_kernel");
	if (!user && !kernel) {
		remove_instance(&self->inst);
		SKIP(return, "exceptions:page_fault_{user,kernel} events are not available");
	}
	/* They are defined together: a kernel cannot have only one. */
	if (!user || !kernel)
		remove_instance(&self->inst);
	ASSERT_TRUE(user && kernel) TH_LOG("exceptions:page_fault_%s is missing",
					   user ? "kernel" : "user");
}

/* Runs in the parent, so tracefs is unmounted even if the test crashed. */
FIXTURE_TEARDOWN_PARENT(page_fault)
{
	remove_instance(&self->inst);
}

/*
 * Deliver the events to a perf tracepoint event of the faulting task that
 * samples every one with its raw record, decoded with the layout tracefs
 * describes.
 */
TEST_F(page_fault, perf)
{
	struct recorder rec = {
		.event = variant->want.user ? "page_fault_user" : "page_fault_kernel",
		.fd = -1,
	};
	int ret;

	/* Without CONFIG_PERF_EVENTS, tracefs has no id files. */
	ret = read_tp_format(self->inst.tracefs, rec.event, &rec.fmt);
	if (ret == -ENOENT)
		SKIP(return, "%s has no perf event id", rec.event);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the id and format of %s: %s",
				 rec.event, strerror(-ret));

	/* A tracepoint that tracefs lists must be known to perf as well. */
	rec.fd = perf_open(&rec, 0);
	ret = rec.fd < 0 ? errno : 0;
	recorder_release(&rec);
	ASSERT_TRUE(ret != ENOENT && ret != EINVAL)
		TH_LOG("perf_event_open(%s, id %lu): %s", rec.event, rec.fmt.id, strerror(ret));
	if (ret)
		SKIP(return, "perf_event_open: %s", strerror(ret));

	run_case(_metadata, variant, &rec);
	recorder_release(&rec);
}

static const char * const pf_events[] = { "page_fault_user", "page_fault_kernel" };

/* The formats of both events into fmt[]; on error, *bad is the event's. */
static int read_pf_formats(const char *tracefs, struct tp_format *fmt, unsigned int *bad)
{
	int ret;

	for (*bad = 0; *bad < ARRAY_SIZE(pf_events); (*bad)++) {
		ret = read_tp_format(tracefs, pf_events[*bad], &fmt[*bad]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * For any workload, a task's count of page_fault_user equals its count of
 * PERF_COUNT_SW_PAGE_FAULTS in user mode, and page_fault_kernel the count
 * in kernel mode, except in a mode whose faults perf does not count. Each
 * variant is a kind of fault of Documentation/trace/events-page-fault.rst.
 */
#define COUNT_PAGES		16

enum count_work {
	WORK_USER_WRITE,	/* user-mode writes to fresh anonymous pages */
	WORK_UACCESS,		/* read() into fresh pages: the kernel faults */
	WORK_FAULTS_DISABLED,	/* FUTEX_WAKE_OP on fresh pages */
	WORK_SEGV_USER_ADDR,	/* user-mode reads of PROT_NONE pages */
	WORK_SEGV_KERNEL_ADDR,	/* user-mode reads of an unmapped kernel address */
	WORK_NOFAULT_KERNEL_ADDR, /* user writes; an eprobe reads a kernel address */
	WORK_KPROBE_FETCH,	/* user writes; a kprobe faults on their pages */
	WORK_KPROBE_STEP,	/* getdents64() into fresh pages, its store probed */
};

/* The group of counters, in the order they are read. */
enum { CNT_SW_USER, CNT_SW_KERNEL, CNT_TP_USER, CNT_TP_KERNEL, NR_CNT };

FIXTURE(fault_count)
{
	struct trace_instance inst;
	unsigned long tp_id[2];		/* page_fault_user, page_fault_kernel */
	int fd[NR_CNT];
	/* What the work runs on, released by the teardown whatever happens. */
	char *warm, *map;		/* COUNT_PAGES pages each */
	int input;			/* the work's file descriptor, or -1 */
	char *data;			/* WORK_UACCESS: the memfd's contents */
};

FIXTURE_VARIANT(fault_count)
{
	enum count_work work;
	/*
	 * Events per access in user and kernel mode: 1 if each access is
	 * reported, -1 if none is, 0 if it is not this mode's to say.
	 */
	int user, kernel;
	/*
	 * The probe is on the instruction that faults (found from a first
	 * fault): each fault hits it once more than a round without faults.
	 */
	bool probe_at_fault;
	/* The architecture refuses the case's probe (-EINVAL): skip. */
	bool probe_refused;
	/*
	 * perf's page-faults does not count this mode's faults: fewer than
	 * one per access, however many events there are.
	 */
	bool perf_skips_user, perf_skips_kernel;
	/*
	 * The task's minor and major faults (getrusage()): 1 if they are the
	 * events of both modes (every fault is handled, once), -1 if fewer
	 * than one per access (no fault is handled), 0 if not compared.
	 */
	int rusage;
};

FIXTURE_VARIANT_ADD(fault_count, user_write)
{
	.work = WORK_USER_WRITE,
	.user = 1,
	.kernel = -1,
	.rusage = 1,
};

FIXTURE_VARIANT_ADD(fault_count, uaccess)
{
	.work = WORK_UACCESS,
	.user = -1,
	.kernel = 1,
	.rusage = 1,
};

/* futex_atomic_op_inuser() runs with page faults disabled. */
FIXTURE_VARIANT_ADD(fault_count, faults_disabled)
{
	.work = WORK_FAULTS_DISABLED,
	.kernel = 1,
	.perf_skips_kernel = true,
};

FIXTURE_VARIANT_ADD(fault_count, segv_user_addr)
{
	.work = WORK_SEGV_USER_ADDR,
	.user = 1,
	.rusage = -1,
};

/*
 * arm64 sends translation faults on kernel addresses to do_bad_area(),
 * not to do_page_fault(); x86 and riscv take them as page faults, and
 * x86 counts no fault on a kernel address in perf.
 */
FIXTURE_VARIANT_ADD(fault_count, segv_kernel_addr)
{
	.work = WORK_SEGV_KERNEL_ADDR,
#if defined(__aarch64__)
	.user = -1,
#elif defined(__x86_64__) || defined(__i386__)
	.user = 1,
	.perf_skips_user = true,
#else
	.user = 1,
#endif
};

/*
 * A nofault read of an unmapped kernel address from kernel mode, on each
 * user fault: an eprobe on page_fault_user fetching the last page of the
 * address space, which copy_from_kernel_nofault() reads.
 */
FIXTURE_VARIANT_ADD(fault_count, nofault_kernel_addr)
{
	.work = WORK_NOFAULT_KERNEL_ADDR,
	.user = 1,
#if defined(__aarch64__)
	.kernel = -1,
#else
	.kernel = 1,
#endif
	.perf_skips_kernel = true,
};

/*
 * A fault in a kprobe's handler, on each user fault: a kprobe on
 * handle_mm_fault() fetching, as a user string, the address being faulted
 * in, which is not mapped yet. riscv's kprobe_fault_handler() fixes up a
 * fault taken while a probe's handler runs, so kprobe_page_fault()
 * consumes it; arm64's and x86's leave it to the fault handler, which
 * fixes it up as any fault with page faults disabled.
 */
FIXTURE_VARIANT_ADD(fault_count, kprobe_fetch)
{
	.work = WORK_KPROBE_FETCH,
	.user = 1,
#if defined(__riscv)
	.kernel = -1,
#else
	.kernel = 1,
#endif
	.perf_skips_kernel = true,
};

/*
 * A fault of an instruction that kprobes single-steps out of line: a kprobe
 * on the store with which getdents64() first writes to a fresh page (found
 * from the ip of a first fault), so that every fault is taken by the copy
 * of the store in the kprobe's slot. kprobe_page_fault() puts the probed
 * address back into the ip before the events: each fault is reported once,
 * with the probed address as ip. arm64 does not let kprobes probe an
 * instruction that has an exception table entry, which every uaccess has.
 */
FIXTURE_VARIANT_ADD(fault_count, kprobe_single_step)
{
	.work = WORK_KPROBE_STEP,
	.user = -1,
	.kernel = 1,
	.probe_at_fault = true,
#if defined(__aarch64__)
	.probe_refused = true,
#endif
};

/* The dynamic event of a case, in the group of the test's own. */
#define PROBE_GROUP		"selftest_page_fault"

struct count_probe {
	char type;		/* 'e' (eprobe) or 'p' (kprobe) */
	const char *name;	/* the event in PROBE_GROUP */
	const char *file;	/* the tracefs file that takes its definition */
	const char *def;	/* the definition after "<type>:<group>/<name> " */
	const char *mark;	/* what each of its records shows, or NULL */
	bool own_pid;		/* record only this process's hits */
};

/* The kernel instruction of WORK_KPROBE_STEP's faults, once found. */
static unsigned long step_ip;

static const struct count_probe *count_probe(enum count_work work)
{
	static char nofault_def[64], step_def[32];
	static const struct count_probe nofault = {
		'e', "nofault", "dynamic_events", nofault_def, NULL,
	}, kprobe = {
		/* strncpy_from_user_nofault() faults: "(fault)" */
		'p', "fetch", "kprobe_events", "handle_mm_fault val=+u0($arg2):ustring",
		"=(fault)",
	}, step = {
		'p', "step", "kprobe_events", step_def, NULL, true,
	};

	switch (work) {
	case WORK_NOFAULT_KERNEL_ADDR:
		snprintf(nofault_def, sizeof(nofault_def),
			 "exceptions.page_fault_user val=@0x%lx:u64",
			 -(unsigned long)getpagesize());
		return &nofault;
	case WORK_KPROBE_FETCH:
		return &kprobe;
	case WORK_KPROBE_STEP:
		snprintf(step_def, sizeof(step_def), "0x%lx", step_ip);
		return &step;
	default:
		return NULL;
	}
}

/* Create the probe and enable it in an instance of the test's own. */
static int probe_start(struct trace_instance *inst, const struct count_probe *probe)
{
	char cmd[256], path[128];
	int ret;

	snprintf(cmd, sizeof(cmd), "%c:%s/%s %s", probe->type, PROBE_GROUP, probe->name,
		 probe->def);
	ret = write_file(inst->tracefs, probe->file, cmd);
	if (ret)
		return ret;
	ret = create_instance(inst);
	if (!ret && probe->own_pid) {
		snprintf(path, sizeof(path), "events/%s/%s/filter", PROBE_GROUP, probe->name);
		snprintf(cmd, sizeof(cmd), "common_pid == %d", getpid());
		ret = write_file(inst->dir, path, cmd);
	}
	snprintf(path, sizeof(path), "events/%s/%s/enable", PROBE_GROUP, probe->name);
	if (!ret)
		ret = write_file(inst->dir, path, "1");
	return ret;
}

/* How many records of the probe the instance holds that show its mark. */
static int probe_hits(struct trace_instance *inst, const struct count_probe *probe)
{
	char path[PATH_MAX], line[512], tag[64];
	int hits = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/trace", inst->dir) >= (int)sizeof(path))
		return -1;
	snprintf(tag, sizeof(tag), ": %s: ", probe->name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		hits += strstr(line, tag) && (!probe->mark || strstr(line, probe->mark));
	fclose(f);
	return hits;
}

static void probe_stop(struct trace_instance *inst, const struct count_probe *probe)
{
	char cmd[128];

	delete_instance(inst);
	snprintf(cmd, sizeof(cmd), "-:%s/%s", PROBE_GROUP, probe->name);
	write_file(inst->tracefs, probe->file, cmd);
}

/* Counters of this task, in one group so that they count the same span. */
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
	struct tp_format fmt[ARRAY_SIZE(pf_events)];
	unsigned int i;
	int ret;

	for (i = 0; i < NR_CNT; i++)
		self->fd[i] = -1;
	self->input = -1;
	if (geteuid())
		SKIP(return, "must be run as root, to count tracepoints");
	if (!find_tracefs(&self->inst) || !has_event(&self->inst, pf_events[0])) {
		remove_instance(&self->inst);
		SKIP(return, "exceptions:page_fault_{user,kernel} events are not available");
	}
	ret = read_pf_formats(self->inst.tracefs, fmt, &i);
	if (ret == -ENOENT)
		remove_instance(&self->inst);
	if (ret == -ENOENT)
		SKIP(return, "%s has no perf event id", pf_events[i]);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the id of %s: %s",
				 pf_events[i], strerror(-ret));
	for (i = 0; i < ARRAY_SIZE(pf_events); i++)
		self->tp_id[i] = fmt[i].id;
	if (count_probe(variant->work)) {
		const struct count_probe *probe = count_probe(variant->work);
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", self->inst.tracefs, probe->file);
		if (access(path, F_OK))
			remove_instance(&self->inst);
		if (access(path, F_OK))
			SKIP(return, "no %s (CONFIG_%s)", probe->file,
			     probe->type == 'e' ? "DYNAMIC_EVENTS" : "KPROBE_EVENTS");
	}

	self->fd[CNT_SW_USER] = count_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
					   true, false, -1);
	ASSERT_LE(0, self->fd[CNT_SW_USER]) TH_LOG("page-faults: %s", strerror(errno));
	self->fd[CNT_SW_KERNEL] = count_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
					     false, true, self->fd[0]);
	/* A tracepoint fires in the kernel, whatever mode the fault was in. */
	self->fd[CNT_TP_USER] = count_open(PERF_TYPE_TRACEPOINT, self->tp_id[0],
					   true, true, self->fd[0]);
	self->fd[CNT_TP_KERNEL] = count_open(PERF_TYPE_TRACEPOINT, self->tp_id[1],
					     true, true, self->fd[0]);
	for (i = 1; i < NR_CNT; i++)
		ASSERT_LE(0, self->fd[i]) TH_LOG("counter %u: %s", i, strerror(errno));
}

FIXTURE_TEARDOWN(fault_count)
{
	size_t len = COUNT_PAGES * getpagesize();
	unsigned int i;

	for (i = 0; i < NR_CNT; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	remove_instance(&self->inst);
	if (self->warm)
		munmap(self->warm, len);
	if (self->map)
		munmap(self->map, len);
	if (self->input >= 0)
		close(self->input);
	free(self->data);
}

/* Read @p, which faults and raises SIGSEGV. Returns false if it did not. */
static bool read_segv(char *p)
{
	struct sigaction sa = {
		.sa_sigaction = segv_handler,
		.sa_flags = SA_SIGINFO,
	}, old;
	bool segv = true;

	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(segv_env, 1)) {
		call_access_fn(access_read, p, 1, 0, -1);
		segv = false;
	}
	sigaction(SIGSEGV, &old, NULL);
	return segv;
}

/*
 * Fault once per page of @map (@nr pages) as @work does. Returns
 * the number of accesses that did not do what they should have.
 */
static int count_work(enum count_work work, char *map, int fd, size_t nr)
{
	size_t page_size = getpagesize(), i;
	char *kaddr = (char *)-page_size;	/* the last page: never mapped */
	int wrong = 0;
	int word = 0;

	for (i = 0; i < nr; i++) {
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
			wrong += !read_segv(p);
			break;
		case WORK_SEGV_KERNEL_ADDR:
			wrong += !read_segv(kaddr);
			break;
		case WORK_KPROBE_STEP:
			/* @fd is a directory: its entries are written to @p */
			lseek(fd, 0, SEEK_SET);
			wrong += syscall(SYS_getdents64, fd, p, page_size) <= 0;
			break;
		}
	}
	return wrong;
}

/* Map fresh pages for @work, one fault each. */
static char *count_map(enum count_work work)
{
	size_t len = COUNT_PAGES * getpagesize();
	int prot = work == WORK_SEGV_USER_ADDR ? PROT_NONE : PROT_READ | PROT_WRITE;
	char *map;

	map = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	/* One fault per page: no large folio fills several at once. */
	madvise(map, len, MADV_NOHUGEPAGE);
	return map;
}

/*
 * Open in *@fd the file @work runs on: for WORK_UACCESS a memfd of @len
 * bytes (its contents in *@data), for WORK_KPROBE_STEP a directory of the
 * kernel's own, whose entries do not change; -1 for the others. Returns 0
 * or -errno.
 */
static int count_input(enum count_work work, const char *tracefs, size_t len, int *fd,
		       char **data)
{
	char path[PATH_MAX];

	switch (work) {
	case WORK_UACCESS:
		*fd = uaccess_memfd(len, data);
		break;
	case WORK_KPROBE_STEP:
		snprintf(path, sizeof(path), "%s/events/exceptions", tracefs);
		*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	default:
		*fd = -1;
		return 0;
	}
	return *fd < 0 ? -errno : 0;
}

/*
 * The ip of the fault that getdents64() of directory @dir takes when it
 * first writes to a fresh page, from a page_fault_kernel sample. Returns 0
 * if no sample had one.
 */
static unsigned long step_find_ip(const char *tracefs, int dir)
{
	struct recorder rec = {
		.event = pf_events[1], .fd = -1,
	};
	size_t page_size = getpagesize();
	char *p = count_map(WORK_KPROBE_STEP);
	struct pf_event evs[16];
	unsigned long ip = 0;
	int nr, i;

	if (!p)
		return 0;
	if (!read_tp_format(tracefs, rec.event, &rec.fmt) && !recorder_start(&rec, getpid())) {
		count_work(WORK_KPROBE_STEP, p, dir, 1);
		recorder_stop(&rec);
		nr = perf_collect(&rec, evs, ARRAY_SIZE(evs));
		for (i = 0; i < nr; i++)
			if (evs[i].address - (unsigned long)p < page_size)
				ip = evs[i].ip;
	}
	recorder_release(&rec);
	munmap(p, COUNT_PAGES * page_size);
	return ip;
}

/*
 * Set up WORK_KPROBE_STEP: find the instruction to probe, and count only
 * the page_fault_kernel events that name it. The counts must still agree
 * with perf's, so every kernel fault must have been reported with it.
 */
static int step_prepare(FIXTURE_DATA(fault_count) * self, int dir)
{
	char filter[64];

	step_ip = step_find_ip(self->inst.tracefs, dir);
	if (!step_ip || !is_kernel_addr(step_ip))
		return -ENOENT;
	snprintf(filter, sizeof(filter), "ip == 0x%lx", step_ip);
	if (ioctl(self->fd[CNT_TP_KERNEL], PERF_EVENT_IOC_SET_FILTER, filter))
		return -errno;
	return 0;
}

TEST_F(fault_count, same_count)
{
	struct { __u64 nr; __u64 val[NR_CNT]; } cnt;
	struct rusage ru[2];
	long faults;
	size_t len = COUNT_PAGES * getpagesize();
	int per_mode[2] = { variant->user, variant->kernel };
	const struct count_probe *probe;
	int ret, mode, hits = 0, before = 0;

	ret = count_input(variant->work, self->inst.tracefs, len, &self->input, &self->data);
	ASSERT_EQ(0, ret) TH_LOG("the file the work runs on: %s", strerror(-ret));
	/* A first round takes the faults of the code and stack paths. */
	self->warm = count_map(variant->work);
	self->map = count_map(variant->work);
	ASSERT_TRUE(self->warm && self->map) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, count_work(variant->work, self->warm, self->input, COUNT_PAGES));
	if (variant->probe_at_fault)
		ASSERT_EQ(0, step_prepare(self, self->input))
			TH_LOG("no kernel fault of the work found to probe");

	probe = count_probe(variant->work);
	if (probe) {
		ret = probe_start(&self->inst, probe);
		if (ret)
			probe_stop(&self->inst, probe);
		if (variant->probe_refused && ret == -EINVAL)
			SKIP(return, "kprobes refuse %s: it has an exception table entry",
			     probe->def);
		if (probe->type == 'e' && (ret == -EINVAL || ret == -ENOENT))
			SKIP(return, "no eprobes (CONFIG_EPROBE_EVENTS): %s", strerror(-ret));
		ASSERT_EQ(0, ret) TH_LOG("cannot set up %s: %s", probe->name, strerror(-ret));
	}
	/* No assertion until the probe is gone: it would stay behind. */
	if (variant->probe_at_fault) {
		/* The probe's hits in a round that takes no fault */
		count_work(variant->work, self->warm, self->input, COUNT_PAGES);
		before = probe_hits(&self->inst, probe);
	}
	getrusage(RUSAGE_THREAD, &ru[0]);
	ioctl(self->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	EXPECT_EQ(0, count_work(variant->work, self->map, self->input, COUNT_PAGES));
	ioctl(self->fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	getrusage(RUSAGE_THREAD, &ru[1]);
	if (probe) {
		hits = probe_hits(&self->inst, probe);
		probe_stop(&self->inst, probe);
	}
	if (variant->probe_at_fault) {
		TH_LOG("kprobe at %s: %d hits without faults, %d in all", probe->def, before,
		       hits);
		/* Each fault hits the probe once more: the single step faulted. */
		EXPECT_EQ(2 * before + COUNT_PAGES, hits)
			TH_LOG("%d faults expected to hit the probe twice", COUNT_PAGES);
	} else if (probe) {
		EXPECT_LE(COUNT_PAGES, hits) TH_LOG("%s: %d records%s%s", probe->name, hits,
						    probe->mark ? " with " : "",
						    probe->mark ?: "");
	}
	ASSERT_EQ(sizeof(cnt), read(self->fd[0], &cnt, sizeof(cnt)));
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
	 * At least one event per access where the kind is reported; fewer
	 * than one per access where it is not (other faults may happen).
	 * perf counts the same, or fewer than one per access where it does
	 * not count the kind.
	 */
	for (mode = 0; mode < 2; mode++) {
		__u64 events = cnt.val[mode ? CNT_TP_KERNEL : CNT_TP_USER];
		__u64 counted = cnt.val[mode ? CNT_SW_KERNEL : CNT_SW_USER];
		bool skips = mode ? variant->perf_skips_kernel : variant->perf_skips_user;
		bool each = events >= COUNT_PAGES;

		EXPECT_TRUE(skips ? counted < COUNT_PAGES : counted == events)
			TH_LOG("%s: %llu events, %llu page-faults", pf_events[mode], events,
			       counted);

		if (per_mode[mode])
			EXPECT_EQ(per_mode[mode] > 0, each)
				TH_LOG("%s: %llu events", pf_events[mode], events);
	}
}

TEST_HARNESS_MAIN
