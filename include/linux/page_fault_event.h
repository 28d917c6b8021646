/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_PAGE_FAULT_EVENT_H
#define _LINUX_PAGE_FAULT_EVENT_H

#include <linux/kprobes.h>
#include <linux/tracepoint-defs.h>

struct pt_regs;

DECLARE_TRACEPOINT(page_fault_user);
DECLARE_TRACEPOINT(page_fault_kernel);

void do_page_fault_trace(struct pt_regs *regs, unsigned long address,
			 unsigned long error_code);

/**
 * page_fault_report - Report a page fault to the exceptions trace events
 * @regs: the registers at the time of the fault
 * @address: the faulting address, as the handler goes on to use it
 * @error_code: the architecture's description of the fault (the x86 error
 *	code, the arm64 ESR, the riscv scause)
 *
 * Emits exceptions:page_fault_user for a fault taken in user mode,
 * exceptions:page_fault_kernel otherwise. An architecture whose handler
 * must run kprobe_page_fault() after fixups of its own calls this where
 * it wants the fault traced; the others call page_fault_enter().
 *
 * While neither event is enabled this is two static branches; the mode
 * test and the events themselves are out of line.
 */
static __always_inline void page_fault_report(struct pt_regs *regs,
					      unsigned long address,
					      unsigned long error_code)
{
	if (tracepoint_enabled(page_fault_user) ||
	    tracepoint_enabled(page_fault_kernel))
		do_page_fault_trace(regs, address, error_code);
}

/**
 * page_fault_enter - Let kprobes have a page fault, then report it
 * @regs: the registers at the time of the fault
 * @address: the faulting address, as the handler goes on to use it
 * @error_code: the architecture's description of the fault
 * @trap: the trap number kprobe_page_fault() takes
 *
 * An architecture's page fault handler calls this first, before it
 * decides anything about the fault. kprobe_page_fault() comes first: it
 * puts back the probed address of an instruction that kprobes single-steps
 * out of line, and may fix up a fault of a probe's handler itself. A fault
 * it fixes up is not reported; every other is, with page_fault_report(),
 * whatever comes of it. The perf software event PERF_COUNT_SW_PAGE_FAULTS
 * is not emitted here: each architecture counts it where it decides that
 * the fault is one it handles, as it always has.
 *
 * Return: true if kprobes handled the fault and the handler must return.
 */
static __always_inline bool page_fault_enter(struct pt_regs *regs,
					     unsigned long address,
					     unsigned long error_code,
					     unsigned int trap)
{
	if (kprobe_page_fault(regs, trap))
		return true;
	page_fault_report(regs, address, error_code);
	return false;
}

#endif /* _LINUX_PAGE_FAULT_EVENT_H */
