//! The ranks on one host without a GPU: one thread per rank, each with the CPU emulator, and the
//! collectives done over host memory behind a barrier. The steps run one by one in the
//! schedule's issue order, which respects every dependency, so this is the reference for what
//! the GPU's two streams must compute: the sharding, the chunks, the roots and offsets of every
//! collective, and the reduction's rounding (each sum in f32, rounded once to the element type,
//! as NCCL's bf16 and f16 sums are).
use super::data::{self, SampleCheck};
use super::schedule::{Buffer, Collective, Layer, Op, Overlap, Schedule, Sharding};
use super::{Form, ParallelError};
use crate::api::{Algorithm, Gemm, GemmConfig, Transpose};
use crate::problem::Scalar;
use crate::Element;
use std::sync::{Barrier, Condvar, Mutex};

/// What every rank's thread shares: one slot per rank for what it contributes to the current
/// collective, and the barrier between contributing and reading.
/// A rank's sends of one group: (peer, elements).
type Sends<T> = Vec<(u32, Vec<T>)>;

struct Group<T> {
    slots: Mutex<Vec<Vec<T>>>,
    /// What each rank sends in a point-to-point group.
    mail: Mutex<Vec<Sends<T>>>,
    barrier: Barrier,
}

/// One rank's buffers on the host.
struct Buffers<T> {
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<T>,
    d: Vec<T>,
}

impl<T: Copy> Buffers<T> {
    fn get(&self, which: Buffer) -> &[T] {
        match which {
            Buffer::A => &self.a,
            Buffer::B => &self.b,
            Buffer::C => &self.c,
            Buffer::D => &self.d,
        }
    }

    fn get_mut(&mut self, which: Buffer) -> &mut [T] {
        match which {
            Buffer::A => &mut self.a,
            Buffer::B => &mut self.b,
            Buffer::C => &mut self.c,
            Buffer::D => &mut self.d,
        }
    }
}

/// The rank's GEMM over `tokens` tokens of its schedule: `out = A·B[:, tokens] (+ out)`.
pub fn gemm_config(sharding: &Sharding, tokens: u32, accumulate: bool) -> GemmConfig {
    let (m, k) = (sharding.m_local(), sharding.k_local());
    GemmConfig::new(m, tokens, k)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(k, k, m)
        .scale(1.0, if accumulate { 1.0 } else { 0.0 })
}

impl<T: Scalar> Group<T> {
    fn ranks(&self) -> usize {
        self.slots.lock().expect("a rank panicked").len()
    }

    /// Every rank puts `mine` in its slot; after the barrier `read` sees all slots; after the
    /// second barrier the slots may be reused.
    fn exchange(&self, rank: u32, mine: Vec<T>, read: impl FnOnce(&[Vec<T>])) {
        self.slots.lock().expect("a rank panicked")[rank as usize] = mine;
        self.barrier.wait();
        read(&self.slots.lock().expect("a rank panicked"));
        self.barrier.wait();
    }

    /// A group of sends and receives: every rank posts its sends, then takes what its peers
    /// sent it (NCCL matches a send to `peer` with that peer's receive from this rank).
    fn point_to_point(&self, rank: u32, group: &[Collective], buffers: &mut Buffers<T>) {
        let sends = group
            .iter()
            .filter_map(|c| match *c {
                Collective::Send {
                    peer,
                    buffer,
                    offset,
                    count,
                } => Some((peer, buffers.get(buffer)[offset..offset + count].to_vec())),
                _ => None,
            })
            .collect();
        self.mail.lock().expect("a rank panicked")[rank as usize] = sends;
        self.barrier.wait();
        {
            let mail = self.mail.lock().expect("a rank panicked");
            for c in group {
                if let Collective::Recv {
                    peer,
                    buffer,
                    offset,
                    count,
                } = *c
                {
                    let (_, data) = mail[peer as usize]
                        .iter()
                        .find(|(to, _)| *to == rank)
                        .expect("a receive without the peer's send");
                    assert_eq!(data.len(), count, "send and receive of different sizes");
                    buffers.get_mut(buffer)[offset..offset + count].copy_from_slice(data);
                }
            }
        }
        self.barrier.wait();
    }

    /// One collective, as NCCL defines it, on this rank's buffers.
    fn collective(&self, rank: u32, c: &Collective, buffers: &mut Buffers<T>) {
        let sum = |pieces: Vec<&[T]>, out: &mut [T]| {
            for (i, o) in out.iter_mut().enumerate() {
                let s: f32 = pieces.iter().map(|p| p[i].to_f64() as f32).sum();
                *o = T::from_f64(s as f64);
            }
        };
        match *c {
            Collective::AllGather {
                buffer,
                offset,
                per_rank,
            } => {
                let own = offset + rank as usize * per_rank;
                let mine = buffers.get(buffer)[own..own + per_rank].to_vec();
                self.exchange(rank, mine, |slots| {
                    for (r, slot) in slots.iter().enumerate() {
                        let at = offset + r * per_rank;
                        buffers.get_mut(buffer)[at..at + per_rank].copy_from_slice(slot);
                    }
                });
            }
            Collective::ReduceScatter {
                send,
                send_offset,
                recv,
                recv_offset,
                per_rank,
            } => {
                let at = send_offset + rank as usize * per_rank;
                let all = send_offset..send_offset + self.ranks() * per_rank;
                let mine = buffers.get(send)[all].to_vec();
                self.exchange(rank, mine, |slots| {
                    let piece = at - send_offset;
                    let pieces = slots.iter().map(|s| &s[piece..piece + per_rank]).collect();
                    sum(
                        pieces,
                        &mut buffers.get_mut(recv)[recv_offset..recv_offset + per_rank],
                    );
                });
            }
            Collective::Send { .. } | Collective::Recv { .. } => {
                unreachable!("sends and receives go through `point_to_point`")
            }
        }
    }
}

/// What one rank computed on the emulator and how its check went.
#[derive(Debug)]
pub struct LocalRank {
    /// The rank.
    pub rank: u32,
    /// Its result ([`Sharding::result`]), column-major.
    pub result: Vec<f64>,
    /// The sampled check against the f64 reference.
    pub check: SampleCheck,
}

/// Runs the layer over `ranks` threads with the emulator: every rank's shards generated from
/// `seed`, its schedule run step by step, its result checked. `tamper`, for the tests' planted
/// bugs, may change each rank's schedule before it runs.
#[allow(clippy::too_many_arguments)] // the job's description, then the tests' tamper hook
pub fn run<T: Element>(
    form: Form,
    layer: Layer,
    ranks: u32,
    overlap: Overlap,
    chunks: u32,
    algorithm: &Algorithm,
    seed: u64,
    tamper: impl Fn(&mut Schedule) + Sync,
) -> Result<Vec<LocalRank>, ParallelError> {
    let schedules = (0..ranks)
        .map(|r| {
            let sharding = Sharding::new(form, layer, ranks, r)?;
            let mut s = Schedule::new(sharding, overlap, chunks)?;
            tamper(&mut s);
            Ok(s)
        })
        .collect::<Result<Vec<_>, ParallelError>>()?;
    let group = Group::<T> {
        slots: Mutex::new(vec![Vec::new(); ranks as usize]),
        mail: Mutex::new(vec![Vec::new(); ranks as usize]),
        barrier: Barrier::new(ranks as usize),
    };
    // Every rank's buffers and flags, for the peers' pulls.
    let nan = T::from_f64(f64::NAN);
    let memory: Vec<Memory<T>> = schedules
        .iter()
        .map(|schedule| {
            let s = &schedule.sharding;
            let mut b = vec![nan; s.len(Buffer::B)];
            place_input(schedule, &data::input_shard::<T>(s, seed), &mut b);
            Memory {
                buffers: Mutex::new(Buffers {
                    a: data::weight_shard(s, seed),
                    b,
                    c: vec![nan; s.len(Buffer::C)],
                    d: vec![nan; s.len(Buffer::D)],
                }),
                flags: Mutex::new(Vec::new()),
                flagged: Condvar::new(),
            }
        })
        .collect();
    std::thread::scope(|scope| {
        let threads: Vec<_> = schedules
            .iter()
            .map(|schedule| {
                let (group, memory) = (&group, &memory[..]);
                scope.spawn(move || run_rank::<T>(schedule, algorithm, seed, group, memory))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a rank's thread panicked"))
            .collect()
    })
}

/// A rank's memory as its peers see it: its buffers, and the flags it has set (each the run's
/// number, here 1), with a condition variable for the peers that wait on them.
struct Memory<T> {
    buffers: Mutex<Buffers<T>>,
    flags: Mutex<Vec<usize>>,
    flagged: Condvar,
}

fn lock<T>(m: &Memory<T>) -> std::sync::MutexGuard<'_, Buffers<T>> {
    m.buffers.lock().expect("a rank panicked")
}

fn run_rank<T: Element>(
    schedule: &Schedule,
    algorithm: &Algorithm,
    seed: u64,
    group: &Group<T>,
    memory: &[Memory<T>],
) -> Result<LocalRank, ParallelError> {
    let s = &schedule.sharding;
    let gemm = Gemm::emulator();
    let own = &memory[s.rank as usize];
    for step in &schedule.steps {
        match &step.op {
            Op::Gemm(g) => {
                let config = gemm_config(s, g.tokens.end - g.tokens.start, g.accumulate);
                let mut guard = lock(own);
                let buffers = &mut *guard;
                let b = &buffers.b[g.b_offset..];
                let out = match g.out {
                    Buffer::C => &mut buffers.c,
                    _ => &mut buffers.d,
                };
                gemm.run(
                    &config,
                    algorithm,
                    &buffers.a[..],
                    b,
                    &mut out[g.out_offset..],
                )
                .map_err(|e| ParallelError::Gemm {
                    rank: s.rank,
                    source: e,
                })?;
            }
            Op::Collectives(collectives) => {
                let p2p =
                    |c: &Collective| matches!(c, Collective::Send { .. } | Collective::Recv { .. });
                let mut buffers = lock(own);
                if collectives.iter().any(p2p) {
                    group.point_to_point(s.rank, collectives, &mut buffers);
                } else {
                    for c in collectives {
                        group.collective(s.rank, c, &mut buffers);
                    }
                }
            }
            Op::Signal(flag) => {
                own.flags.lock().expect("a rank panicked").push(*flag);
                own.flagged.notify_all();
            }
            Op::Pull(p) => {
                let peer = &memory[p.peer as usize];
                if let Some(flag) = p.ready {
                    let mut flags = peer.flags.lock().expect("a rank panicked");
                    while !flags.contains(&flag) {
                        flags = peer.flagged.wait(flags).expect("a rank panicked");
                    }
                }
                let data = lock(peer).get(p.from)[p.from_offset..p.from_offset + p.count].to_vec();
                lock(own).get_mut(p.to)[p.to_offset..p.to_offset + p.count].copy_from_slice(&data);
            }
        }
    }
    let (which, _, _) = s.result();
    let buffers = lock(own);
    let result = buffers.get(which);
    Ok(LocalRank {
        rank: s.rank,
        check: data::check_result(s, seed, result, 12),
        result: result.iter().map(|v| v.to_f64()).collect(),
    })
}

/// Copies the rank's input shard (`k_local × its tokens`, from [`data::input_shard`]) into B
/// where its schedule wants each piece ([`Schedule::input`]).
pub fn place_input<T: Copy>(schedule: &Schedule, input: &[T], b: &mut [T]) {
    let s = &schedule.sharding;
    let (k, first) = (s.k_local() as usize, s.input_tokens().start);
    for (tokens, offset) in &schedule.input {
        let from = (tokens.start - first) as usize * k;
        let len = (tokens.end - tokens.start) as usize * k;
        b[*offset..offset + len].copy_from_slice(&input[from..from + len]);
    }
}
