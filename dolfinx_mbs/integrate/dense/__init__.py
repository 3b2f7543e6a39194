"""The dense backend: small systems gathered as dense arrays on every rank, stepped by the TS
path's schemes, by exact propagation, or as a whole run's step maps formed in batch."""
