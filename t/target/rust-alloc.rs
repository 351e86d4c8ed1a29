// Fixture of t0078-demangle, built by the test with Debian's rustc (legacy
// and v0 symbol mangling): allocations at known functions of the module
// demo of the crate rtest, kept to the end.
//
//   rtest::demo::allocates  Vec::with_capacity(1000 + i) of u64, i = 0..10:
//                           10 blocks, 8 * 10045 = 80360 bytes
//   rtest::demo::boxes      Box::new([u64; 64]), 7 times: 7 x 512 bytes
mod demo {
    #[inline(never)]
    pub fn allocates(n: usize) -> Vec<u64> {
        let mut v = Vec::with_capacity(n);
        v.push(n as u64);
        v
    }

    #[inline(never)]
    pub fn boxes(n: u64) -> Box<[u64; 64]> {
        Box::new([n; 64])
    }
}

fn main() {
    let mut keep = Vec::new();
    for i in 0..10 {
        keep.push(demo::allocates(1000 + i));
    }
    let mut boxed = Vec::new();
    for i in 0..7 {
        boxed.push(demo::boxes(i));
    }
    let sum: u64 = keep.iter().map(|v| v[0]).sum::<u64>()
        + boxed.iter().map(|b| b[63]).sum::<u64>();
    println!("done {}", sum);
}
