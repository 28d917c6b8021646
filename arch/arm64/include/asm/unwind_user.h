/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __ASM_UNWIND_USER_H
#define __ASM_UNWIND_USER_H

#ifdef CONFIG_UNWIND_USER

#include <asm/compiler.h>
#include <asm/ptrace.h>

static inline int unwind_user_word_size(struct pt_regs *regs)
{
	/*
	 * AArch32 code has no single frame layout to follow (A32 and T32
	 * use different frame pointer registers, and the APCS frame differs
	 * from the AAPCS one), so rather than report a wrong stack, compat
	 * tasks are not unwound at all: unwind_deferred_request() refuses
	 * them, and perf walks their stacks in place.
	 */
	if (compat_user_mode(regs))
		return 0;
	return sizeof(long);
}

#endif /* CONFIG_UNWIND_USER */

#ifdef CONFIG_HAVE_UNWIND_USER_FP

/*
 * An AAPCS64 frame record is two 64-bit words, the caller's x29 and the
 * return address (x30), and x29 points at it. Taking fp + 16 as the CFA
 * puts the return address at CFA - 8 and the caller's frame record
 * pointer at CFA - 16. Only native tasks are unwound, so @ws is 8.
 *
 * There is no entry frame: in a function that has not linked its frame
 * record yet (or never does), x29 is still the caller's, and the walk
 * goes on from there, as perf_callchain_user() does in place. The tools
 * add the caller from x30, which they sample for either walk.
 */
#define ARCH_INIT_USER_FP_FRAME(ws)			\
	.cfa_off	=  2 * (ws),			\
	.ra_off		= -1 * (ws),			\
	.fp_off		= -2 * (ws),			\
	.use_fp		= true,

/* Saved return addresses may be signed (pac-ret): keep the address only. */
static inline unsigned long unwind_user_strip_ra(unsigned long ra)
{
	return ptrauth_strip_user_insn_pac(ra);
}

#define unwind_user_strip_ra unwind_user_strip_ra

#endif /* CONFIG_HAVE_UNWIND_USER_FP */

#endif /* __ASM_UNWIND_USER_H */
