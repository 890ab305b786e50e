//! `edgeflow`: train and run pre-defined sparse neural networks on FPGAs.

use clap::Parser;

fn main() {
    let cli = edgeflow::commands::Cli::parse();
    if let Err(e) = edgeflow::commands::exec(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
