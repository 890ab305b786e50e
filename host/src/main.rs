//! `edgeflow`: train and run pre-defined sparse neural networks on FPGAs.

fn main() {
    let cli = edgeflow::commands::parse();
    if let Err(e) = edgeflow::commands::exec(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
