"""Everything that touches the live process: steps, timing, ranges, profiler, magics."""
