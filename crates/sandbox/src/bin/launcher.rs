//! `openclaw-tool-search-launcher`: applies the OS containment layers, then execs node.
//! All logic lives in `tool_search_sandbox::launcher` (documented there).

fn main() {
    tool_search_sandbox::launcher::main()
}
