//! Generators of random programs (the property tests' and the interop
//! tests'): blocks of code that each leave the stack as they found it,
//! lowered to one entry function with 4 locals, and effect answers.

use super::*;
use proptest::prelude::*;
use serde_json::json;
use tcc_engine::local_host::EffectAnswer;

/// A block of code that leaves the stack as it found it.
#[derive(Debug, Clone)]
pub enum Block {
    Compute(#[allow(dead_code)] u8, f64),
    Effect(u8, bool),
    Sleep(u8),
    Event(u8),
    Object(u8),
    TryThrow(#[allow(dead_code)] u8),
    Join(bool, u8),
}

pub fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (0u8..3, -5.0f64..5.0).prop_map(|(l, n)| Block::Compute(l, n.round())),
        (0u8..3, any::<bool>()).prop_map(|(k, i)| Block::Effect(k, i)),
        (0u8..3).prop_map(Block::Sleep),
        (0u8..2).prop_map(Block::Event),
        (0u8..3).prop_map(Block::Object),
        (0u8..3).prop_map(Block::TryThrow),
        (any::<bool>(), 0u8..3).prop_map(|(a, k)| Block::Join(a, k)),
    ]
}

/// Locals: 0..3 numbers/values, 3 = accumulator array.
pub fn lower(blocks: &[Block]) -> Vec<I> {
    let mut c = vec![I::NewArray, I::StoreLocal { local: 3 }];
    for l in 0..3u32 {
        c.extend([c_num(f64::from(l)), I::StoreLocal { local: l }]);
    }
    for b in blocks {
        let at = c.len() as u32;
        match b {
            Block::Compute(_, n) => {
                // Local 0 only ever holds numbers, so the program stays well-typed.
                let l = 0;
                c.extend([
                    I::LoadLocal { local: l },
                    c_num(*n),
                    I::Add,
                    I::StoreLocal { local: l },
                ]);
            }
            Block::Effect(k, with_input) => {
                if *with_input {
                    c.extend([
                        I::NewObject,
                        I::LoadLocal { local: 0 },
                        I::SetProp { key: "v".into() },
                    ]);
                }
                c.extend([
                    c_str(&format!("e{k}")),
                    I::Effect {
                        has_input: *with_input,
                    },
                    I::StoreLocal { local: 1 },
                ]);
            }
            Block::Sleep(n) => c.extend([c_num(f64::from(*n)), I::Sleep, I::Pop]),
            Block::Event(k) => c.extend([
                c_str(&format!("ev{k}")),
                I::WaitForEvent,
                I::StoreLocal { local: 2 },
            ]),
            Block::Object(l) => c.extend([
                I::LoadLocal { local: 3 },
                I::NewObject,
                I::LoadLocal {
                    local: u32::from(*l),
                },
                I::SetProp { key: "k".into() },
                I::ArrayPush,
                I::Pop,
            ]),
            // Throws local 0 (always a number) and catches it back into local 0.
            Block::TryThrow(_) => c.extend([
                I::PushTry {
                    catch: at + 4,
                    finally: None,
                },
                I::LoadLocal { local: 0 },
                I::Throw,
                I::Nop,
                I::StoreLocal { local: 0 },
            ]),
            Block::Join(all, k) => c.extend([
                I::Fork {
                    count: 2,
                    join_pc: at + 5,
                },
                c_num(1.0),
                I::Sleep,
                c_str(&format!("e{k}")),
                I::Effect { has_input: false },
                if *all { I::JoinAll } else { I::JoinAny },
                I::StoreLocal { local: 2 },
            ]),
        }
    }
    c.extend([
        I::LoadLocal { local: 3 },
        I::LoadLocal { local: 0 },
        I::ArrayPush,
        I::LoadLocal { local: 1 },
        I::ArrayPush,
        I::LoadLocal { local: 2 },
        I::ArrayPush,
        I::Return,
    ]);
    c
}

pub fn answer() -> impl Strategy<Value = EffectAnswer> {
    prop_oneof![
        (-100i32..100).prop_map(|n| EffectAnswer::Result(num(f64::from(n)))),
        Just(EffectAnswer::Result(
            json!({"t":"array","v":[{"t":"string","v":"x"}]})
        )),
        Just(EffectAnswer::Fail("boom".into())),
    ]
}
