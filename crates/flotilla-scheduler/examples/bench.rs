//! The scheduling benchmark without the rest of the binary: prints the figures as one JSON line.
//! `cargo run --release -p flotilla-scheduler --example bench [clusters bindings nodes]`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let figures = flotilla_scheduler::bench::run(
        args.first().copied().unwrap_or(100),
        args.get(1).copied().unwrap_or(10_000),
        args.get(2).copied().unwrap_or(5_000),
    )?;
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}
