//! The word operations of the numeric model that the lowered form and
//! contract clauses name (arithmetic and comparisons at a kind's width).

use crate::model::*;

/// A word operation of the numeric model, computed at its kind's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Neg,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

impl Arith {
    /// The word operation a flow tag (or a contract's flow tag) names.
    pub fn of_tag(t: u32) -> Option<Arith> {
        Some(match t {
            tag::NEG => Arith::Neg,
            tag::ADD => Arith::Add,
            tag::SUB => Arith::Sub,
            tag::MUL => Arith::Mul,
            tag::DIV => Arith::Div,
            tag::REM => Arith::Rem,
            tag::SHIFT_LEFT => Arith::Shl,
            tag::SHIFT_RIGHT => Arith::Shr,
            tag::BIT_AND => Arith::And,
            tag::BIT_OR => Arith::Or,
            tag::BIT_XOR => Arith::Xor,
            _ => return None,
        })
    }

    /// Whether the operation has a fault path (overflow, division by
    /// zero, oversized shift); bit operations never fault.
    pub fn checked(self) -> bool {
        !matches!(self, Arith::And | Arith::Or | Arith::Xor)
    }
}

/// A comparison of two canonical words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    /// The comparison a flow tag (or a contract's flow tag) names.
    pub fn of_tag(t: u32) -> Option<Compare> {
        Some(match t {
            tag::EQ => Compare::Eq,
            tag::NE => Compare::Ne,
            tag::LT => Compare::Lt,
            tag::LE => Compare::Le,
            tag::GT => Compare::Gt,
            tag::GE => Compare::Ge,
            _ => return None,
        })
    }

    /// The runtime's comparison code (`zlm_cmp`): the comparison's
    /// operation tag.
    pub fn code(self) -> u32 {
        match self {
            Compare::Eq => tag::EQ,
            Compare::Ne => tag::NE,
            Compare::Lt => tag::LT,
            Compare::Le => tag::LE,
            Compare::Gt => tag::GT,
            Compare::Ge => tag::GE,
        }
    }
}
