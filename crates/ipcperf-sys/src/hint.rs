//! A barrier for timed loops: the compiler must take memory behind a pointer as
//! read and written, and nothing is stored on the way.

/// Tell the compiler the memory `p` points into was read and written here, so a
/// copy into it in a loop is made each time round, not once. The pointer stays
/// in a register: `std::hint::black_box` stores its argument on the stack and
/// passes its address, stores each time round the loop that a 64-byte copy's
/// speed turned on (memcpy 64 B ran at 0.84× in a quarter of the stack
/// positions a process can start at; `bench/memcpy-stack.sh`).
#[inline(always)]
pub fn clobber(p: *const u8) {
    // SAFETY: the template is a comment: no instruction runs and nothing is read or
    // written. `p` is only named in a register. Without `nomem` the compiler
    // takes any memory as read and written, which is the point; `nostack`:
    // nothing is pushed.
    unsafe { std::arch::asm!("/* {0} */", in(reg) p, options(nostack, preserves_flags)) }
}
