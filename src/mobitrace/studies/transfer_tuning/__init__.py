"""transfer-tuning (Guner and Kosar): energy and throughput of HTTP
transfers against concurrency, parallelism and I/O request size."""
