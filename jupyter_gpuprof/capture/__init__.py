"""Everything that touches the live process: step driver, timing, phase ranges, profiler session, magics."""
