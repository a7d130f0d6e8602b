//! The crate's error type: every fallible constructor, parser and algorithm returns it.

use std::fmt;

/// What was wrong with one line of FSA text (see [`Error::Parse`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParseProblem {
    /// A field that should be a number is not one.
    BadNumber {
        /// The offending field.
        token: String,
        /// What the field should hold (`"state"`, `"label"`, `"score"`, ...).
        field: &'static str,
    },
    /// A state number is negative.
    NegativeState {
        /// The offending value.
        state: i64,
    },
    /// The line has the wrong number of fields for the chosen format.
    WrongFieldCount {
        /// The number of fields found.
        found: usize,
        /// The field counts this format accepts, in words.
        expected: String,
    },
    /// A `[` without its `]`, a `]` without its `[`, or a ragged list where none belongs.
    Brackets {
        /// What was wrong with the brackets.
        detail: &'static str,
    },
    /// An arc's destination is beyond the final state.
    DestBeyondFinal {
        /// The destination state.
        dest: i32,
        /// The final state.
        final_state: i32,
    },
    /// An arc leaves the final state or a state beyond it.
    SrcNotBeforeFinal {
        /// The source state.
        src: i32,
        /// The final state.
        final_state: i32,
    },
    /// An arc labelled `-1` does not enter the final state.
    MinusOneNotFinal {
        /// The destination of the arc.
        dest: i32,
        /// The final state.
        final_state: i32,
    },
    /// An arc labelled `-1` in OpenFst text, where final states are written as final lines.
    MinusOneLabel,
    /// k2 text: arcs must be grouped by source state in non-decreasing order.
    UnsortedSource {
        /// The source state of this line.
        src: i32,
        /// The source state of the previous arc line.
        previous: i32,
    },
    /// The text ends with an arc line: k2 text must end with the final-state line.
    MissingFinalLine,
    /// k2 text: a line after the final-state line.
    AfterFinalLine,
    /// OpenFst text: a state is given a final weight twice.
    FinalTwice {
        /// The state.
        state: i32,
    },
    /// A state number too large: beyond `i32`, or so far beyond the size of the text (more
    /// than 64 states per byte, at least a million allowed) that it would only allocate
    /// memory for states no line mentions.
    TooManyStates {
        /// The state number.
        state: i64,
    },
    /// A symbol table gives one symbol or one id twice.
    DuplicateSymbol {
        /// The symbol.
        symbol: String,
        /// Its id on this line.
        id: i64,
    },
    /// A label name (or id) that the symbol table given does not hold.
    UnknownSymbol {
        /// The name, or the id written as a number.
        symbol: String,
        /// Which table: `"input"` or `"output"`.
        table: &'static str,
    },
}

impl fmt::Display for ParseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseProblem::BadNumber { token, field } => {
                write!(f, "cannot read {field} from {token:?}")
            }
            ParseProblem::NegativeState { state } => write!(f, "state {state} is negative"),
            ParseProblem::WrongFieldCount { found, expected } => {
                write!(f, "found {found} fields, expected {expected}")
            }
            ParseProblem::Brackets { detail } => write!(f, "bad ragged list: {detail}"),
            ParseProblem::DestBeyondFinal { dest, final_state } => write!(
                f,
                "destination state {dest} is beyond the final state {final_state}"
            ),
            ParseProblem::SrcNotBeforeFinal { src, final_state } => write!(
                f,
                "arc leaves state {src}, but the final state {final_state} must have no leaving arcs"
            ),
            ParseProblem::MinusOneNotFinal { dest, final_state } => write!(
                f,
                "arc labelled -1 enters state {dest}, but only arcs entering the final state {final_state} may carry -1"
            ),
            ParseProblem::MinusOneLabel => write!(
                f,
                "label -1 is reserved for k2's final arcs; OpenFst text gives final states as final lines"
            ),
            ParseProblem::UnsortedSource { src, previous } => write!(
                f,
                "source state {src} follows source state {previous}; arcs must be sorted by source state"
            ),
            ParseProblem::MissingFinalLine => {
                write!(f, "the text ends without the final-state line")
            }
            ParseProblem::AfterFinalLine => write!(f, "a line after the final-state line"),
            ParseProblem::FinalTwice { state } => {
                write!(f, "state {state} is given a final weight twice")
            }
            ParseProblem::DuplicateSymbol { symbol, id } => write!(
                f,
                "symbol {symbol:?} with id {id}: the symbol or the id is already in the table"
            ),
            ParseProblem::UnknownSymbol { symbol, table } => {
                write!(f, "{symbol:?} is not in the {table} symbol table")
            }
            ParseProblem::TooManyStates { state } => write!(
                f,
                "state {state} is too large (beyond i32, or far beyond what the text describes)"
            ),
        }
    }
}

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Malformed FSA text.
    Parse {
        /// The 1-based line number.
        line: usize,
        /// What was wrong.
        problem: ParseProblem,
    },
    /// An arc's `src_state` differs from the state (row) it is stored under.
    ArcSrcMismatch {
        /// The arc index.
        arc: usize,
        /// The arc's `src_state`.
        src_state: i32,
        /// The state it is stored under.
        row: usize,
    },
    /// An arc's destination is outside `0..num_states`.
    DestOutOfRange {
        /// The arc index.
        arc: usize,
        /// The destination state.
        dest_state: i32,
        /// The number of states.
        num_states: usize,
    },
    /// The arcs do not have the number of axes the type needs (2 for `Fsa`, 3 for `FsaVec`).
    WrongAxes {
        /// The axes needed.
        expected: usize,
        /// The axes found.
        got: usize,
    },
    /// A per-arc attribute whose length differs from the number of arcs.
    AttrLength {
        /// The attribute name.
        name: String,
        /// The number of arcs.
        expected: usize,
        /// The attribute's length.
        got: usize,
    },
    /// An attribute an operation needs is missing or has the wrong kind.
    MissingAttr {
        /// The attribute name.
        name: String,
        /// What the operation needs.
        needed: &'static str,
    },
    /// Two FSAs to be combined disagree on their attributes.
    AttrMismatch {
        /// The attribute name.
        name: String,
        /// The FSA index where the disagreement was found.
        fsa: usize,
    },
    /// An arc goes backwards (or is a self-loop) where a top-sorted acyclic FSA is needed.
    NotTopSortedAcyclic {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// The arc index within that FSA.
        arc: usize,
        /// The arc's source state.
        src_state: i32,
        /// The arc's destination state.
        dest_state: i32,
    },
    /// A cycle other than a self-loop, where an acyclic FSA is needed.
    Cycle {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// A state on the cycle.
        state: i32,
    },
    /// A label sequence holds `-1`, which is reserved for final arcs.
    ReservedLabel {
        /// The sequence index.
        sequence: usize,
        /// The position in the sequence.
        position: usize,
    },
    /// Two sequences that must have equal lengths do not.
    LengthMismatch {
        /// The sequence index.
        sequence: usize,
        /// The length of the labels.
        labels: usize,
        /// The length of the aux labels.
        aux_labels: usize,
    },
    /// The FSA cannot be written in OpenFst text.
    NotOpenFstExpressible {
        /// The state at fault.
        state: i32,
        /// Why.
        reason: &'static str,
    },
    /// An error from the ragged layer underneath.
    Ragged(ragged_core::Error),
    /// An arc leaves the final state: k2's FSAs have none (the final state is entered by
    /// `-1` arcs and left by nothing).
    ArcLeavesFinal {
        /// The arc index.
        arc: usize,
        /// The final state.
        final_state: usize,
    },
    /// An arc's `src_state` is negative or not below the number of states.
    SrcOutOfRange {
        /// The arc index.
        arc: usize,
        /// The arc's `src_state`.
        src_state: i32,
        /// The number of states.
        num_states: usize,
    },
    /// More states than the `i32` offsets allow, or than the arcs could name.
    TooManyStates {
        /// The number of states asked for.
        num_states: usize,
        /// The most allowed for this input.
        limit: usize,
    },
    /// An argument outside its allowed range.
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// Its value (integers up to 2^53 are exact).
        value: f64,
        /// The allowed range, in words.
        allowed: &'static str,
    },
    /// An operation that needs acceptors was given a transducer (an FSA with `aux_labels`).
    NotAcceptor {
        /// The operation.
        op: &'static str,
        /// Which operand (`"a"`, `"b"` or `"self"`).
        operand: &'static str,
    },
    /// Two FsaVecs to be combined pairwise hold different numbers of FSAs (neither is 1).
    FsaCountMismatch {
        /// FSAs in the first operand.
        a: usize,
        /// FSAs in the second operand.
        b: usize,
    },
    /// An index into an FsaVec (e.g. in a `b_to_a_map`) is out of range.
    FsaIndexOutOfRange {
        /// The position in the map.
        position: usize,
        /// The offending index.
        index: i32,
        /// The number of FSAs it indexes.
        num_fsas: usize,
    },
    /// An epsilon arc where the operation needs an epsilon-free FSA.
    HasEpsilon {
        /// The operation.
        op: &'static str,
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// The arc index within that FSA.
        arc: usize,
    },
    /// A cycle of epsilon arcs with positive total score: the best path is unbounded.
    PositiveEpsilonCycle {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// A state whose epsilon closure runs around the cycle.
        state: i32,
    },
    /// Determinization passed the caller's bound on states or arcs (the input may lack the
    /// twins property, so that no finite deterministic equivalent exists).
    DeterminizeLimit {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// The bound on states.
        max_states: usize,
        /// The bound on arcs.
        max_arcs: usize,
    },
    /// Two arcs of one state share a label where a deterministic FSA is needed.
    NotDeterministic {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// The state.
        state: i32,
        /// The repeated label.
        label: i32,
    },
    /// Weight pushing found no finite state potentials (a cycle with positive score, or the
    /// log-semiring iteration did not converge).
    PushingDiverged {
        /// The FSA index (0 for a single FSA).
        fsa: usize,
    },
    /// A supervision segment outside its `log_probs` (bad sequence index, negative start or
    /// duration, or frames past the end of the sequence).
    SegmentOutOfRange {
        /// The segment index (its row in the segments given).
        segment: usize,
        /// The sequence index it names.
        sequence: i32,
        /// Its start frame.
        start: i32,
        /// Its number of frames.
        duration: i32,
        /// The number of sequences `N` of `log_probs`.
        num_sequences: usize,
        /// The number of frames `T` of `log_probs`.
        num_frames: usize,
    },
    /// A NaN in `log_probs` at a frame some segment reads.
    NanLogProb {
        /// The sequence index.
        sequence: usize,
        /// The frame.
        frame: usize,
        /// The symbol.
        symbol: usize,
    },
    /// A size computed from the input does not fit the offsets (`i32`) or memory.
    TooLarge {
        /// What was too large.
        what: &'static str,
    },
    /// A graph arc's label is outside `-1..C` for dense FSAs with `C` symbols.
    LabelOutOfRange {
        /// The FSA index in the graphs.
        fsa: usize,
        /// The arc index within that FSA.
        arc: usize,
        /// The label.
        label: i32,
        /// The number of symbols `C`.
        num_symbols: usize,
    },
    /// Two counts that must agree do not (graphs and segments, a map and the graphs).
    CountMismatch {
        /// What is counted.
        what: &'static str,
        /// The count needed.
        expected: usize,
        /// The count found.
        got: usize,
    },
    /// An entry of an index map outside `0..size`.
    MapOutOfRange {
        /// The map's name.
        map: &'static str,
        /// The position in the map.
        position: usize,
        /// The value there.
        value: i32,
        /// The size it indexes.
        size: usize,
    },
    /// A beam or threshold that is NaN, zero or negative.
    BadBeam {
        /// The parameter name.
        name: &'static str,
        /// Its value.
        value: f32,
    },
    /// `max_active_states` not above `min_active_states`.
    BadActiveStates {
        /// The minimum given.
        min_active_states: usize,
        /// The maximum given.
        max_active_states: usize,
    },
    /// An arc score the operation cannot work with: NaN, or `+inf` where the result would
    /// be infinite or undefined (each operation documents which).
    BadScore {
        /// The operation.
        op: &'static str,
        /// The FSA index (0 for a single FSA).
        fsa: usize,
        /// The arc index within that FSA.
        arc: usize,
        /// The score.
        score: f32,
        /// Why the operation refuses it.
        reason: &'static str,
    },
    /// A `+inf` in `log_probs` at a (frame, symbol) some segment's graph reads: a
    /// log-probability is at most 0, and an infinite one makes the loss undefined.
    InfiniteLogProb {
        /// The sequence index.
        sequence: usize,
        /// The frame.
        frame: usize,
        /// The symbol.
        symbol: usize,
    },
    /// A file could not be opened, read or written, or is not UTF-8 text.
    File {
        /// The path as given.
        path: String,
        /// What went wrong (the operating system's words, or the line that is not UTF-8).
        message: String,
    },
    /// Malformed contents of a file: the error at its line, with the file's path.
    InFile {
        /// The path as given.
        path: String,
        /// The error inside the file (a [`Error::Parse`] with the line).
        source: Box<Error>,
    },
    /// An operation's output, or the memory it holds, would pass its documented bound.
    OutputLimit {
        /// The operation.
        op: &'static str,
        /// What is counted, and the name of the bound.
        what: &'static str,
        /// The count reached (for a bound on memory, in bytes) when the bound was passed.
        count: usize,
        /// The bound.
        limit: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse { line, problem } => write!(f, "line {line}: {problem}"),
            Error::ArcSrcMismatch {
                arc,
                src_state,
                row,
            } => write!(
                f,
                "arc {arc} has src_state {src_state} but is stored under state {row}"
            ),
            Error::DestOutOfRange {
                arc,
                dest_state,
                num_states,
            } => write!(
                f,
                "arc {arc} enters state {dest_state}, outside an FSA with {num_states} states"
            ),
            Error::WrongAxes { expected, got } => {
                write!(f, "arcs with {got} axes where {expected} are needed")
            }
            Error::AttrLength {
                name,
                expected,
                got,
            } => write!(
                f,
                "attribute {name:?} has {got} values for {expected} arcs"
            ),
            Error::MissingAttr { name, needed } => {
                write!(f, "attribute {name:?} is missing or not {needed}")
            }
            Error::AttrMismatch { name, fsa } => write!(
                f,
                "FSA {fsa} disagrees with FSA 0 on attribute {name:?} (missing or of another kind)"
            ),
            Error::NotTopSortedAcyclic {
                fsa,
                arc,
                src_state,
                dest_state,
            } => write!(
                f,
                "FSA {fsa} is not top-sorted and acyclic: arc {arc} goes from state {src_state} to state {dest_state}"
            ),
            Error::Cycle { fsa, state } => {
                write!(f, "FSA {fsa} has a cycle through state {state}")
            }
            Error::ReservedLabel { sequence, position } => write!(
                f,
                "label -1 at position {position} of sequence {sequence} is reserved for final arcs"
            ),
            Error::LengthMismatch {
                sequence,
                labels,
                aux_labels,
            } => write!(
                f,
                "sequence {sequence} has {labels} labels but {aux_labels} aux labels"
            ),
            Error::NotOpenFstExpressible { state, reason } => {
                write!(f, "cannot write state {state} as OpenFst text: {reason}")
            }
            Error::Ragged(err) => write!(f, "ragged shape: {err}"),
            Error::ArcLeavesFinal { arc, final_state } => write!(
                f,
                "arc {arc} leaves the final state {final_state}, which must have no leaving arcs"
            ),
            Error::SrcOutOfRange {
                arc,
                src_state,
                num_states,
            } => write!(
                f,
                "arc {arc} leaves state {src_state}, outside an FSA with {num_states} states"
            ),
            Error::TooManyStates { num_states, limit } => write!(
                f,
                "{num_states} states asked for, more than the {limit} allowed for these arcs"
            ),
            Error::InvalidArgument {
                what,
                value,
                allowed,
            } => write!(f, "{what} = {value} is out of range: {allowed}"),
            Error::NotAcceptor { op, operand } => write!(
                f,
                "{op} needs acceptors, but operand {operand} has aux_labels (a transducer)"
            ),
            Error::FsaCountMismatch { a, b } => write!(
                f,
                "cannot pair {a} FSAs with {b} FSAs: the counts must match or one must be 1"
            ),
            Error::FsaIndexOutOfRange {
                position,
                index,
                num_fsas,
            } => write!(
                f,
                "index {index} at position {position} is outside an FsaVec of {num_fsas} FSAs"
            ),
            Error::HasEpsilon { op, fsa, arc } => write!(
                f,
                "{op} needs an epsilon-free FSA, but arc {arc} of FSA {fsa} has label 0"
            ),
            Error::PositiveEpsilonCycle { fsa, state } => write!(
                f,
                "FSA {fsa} has an epsilon cycle with positive score reachable from state {state}"
            ),
            Error::DeterminizeLimit {
                fsa,
                max_states,
                max_arcs,
            } => write!(
                f,
                "determinizing FSA {fsa} passed the bound of {max_states} states or {max_arcs} arcs (is it determinizable?)"
            ),
            Error::NotDeterministic { fsa, state, label } => write!(
                f,
                "FSA {fsa} is not deterministic: state {state} has two arcs labelled {label}"
            ),
            Error::PushingDiverged { fsa } => write!(
                f,
                "weight pushing of FSA {fsa} found no finite potentials (positive cycle or no convergence)"
            ),
            Error::SegmentOutOfRange {
                segment,
                sequence,
                start,
                duration,
                num_sequences,
                num_frames,
            } => write!(
                f,
                "supervision segment {segment} (sequence {sequence}, start frame {start}, {duration} frames) does not fit log_probs with {num_sequences} sequences of {num_frames} frames"
            ),
            Error::NanLogProb {
                sequence,
                frame,
                symbol,
            } => write!(
                f,
                "log_probs[{sequence}, {frame}, {symbol}] is NaN"
            ),
            Error::TooLarge { what } => write!(f, "{what} too large"),
            Error::LabelOutOfRange {
                fsa,
                arc,
                label,
                num_symbols,
            } => write!(
                f,
                "arc {arc} of graph {fsa} has label {label}, outside -1..{num_symbols} for dense FSAs with {num_symbols} symbols"
            ),
            Error::CountMismatch {
                what,
                expected,
                got,
            } => write!(f, "{got} {what} where {expected} are needed"),
            Error::MapOutOfRange {
                map,
                position,
                value,
                size,
            } => write!(
                f,
                "{map}[{position}] = {value} is outside 0..{size}"
            ),
            Error::BadBeam { name, value } => {
                write!(f, "{name} = {value} must be a positive number")
            }
            Error::BadActiveStates {
                min_active_states,
                max_active_states,
            } => write!(
                f,
                "max_active_states = {max_active_states} must exceed min_active_states = {min_active_states}"
            ),
            Error::BadScore {
                op,
                fsa,
                arc,
                score,
                reason,
            } => write!(f, "{op}: arc {arc} of FSA {fsa} scores {score}: {reason}"),
            Error::InfiniteLogProb {
                sequence,
                frame,
                symbol,
            } => write!(
                f,
                "log_probs[{sequence}, {frame}, {symbol}] is +inf (a log-probability is at most 0)"
            ),
            Error::OutputLimit {
                op,
                what,
                count,
                limit,
            } => write!(
                f,
                "{op}: {count} {what} pass the bound of {limit}"
            ),
            Error::File { path, message } => write!(f, "{path}: {message}"),
            Error::InFile { path, source } => write!(f, "{path}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Ragged(err) => Some(err),
            Error::InFile { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<ragged_core::Error> for Error {
    fn from(err: ragged_core::Error) -> Self {
        Error::Ragged(err)
    }
}

/// Panics for an index out of range; one cold place for the message.
#[cold]
#[track_caller]
pub(crate) fn index_out_of_range(what: &str, index: usize, size: usize) -> ! {
    panic!("{what} {index} out of bounds for a container with {size} {what}s")
}
