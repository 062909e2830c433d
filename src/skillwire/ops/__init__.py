"""Operating a running skillwire: metrics, logs and traces. The ground floor beside `core/`: these modules start
threads, write files and install logging handlers, which `core/` (the protocol's pure rules) never does."""
