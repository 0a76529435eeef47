"""Corrections, the write path: AUDN on ingest (`writer`, `policy`, `normalize`) and the nightly
job that clusters, merges, promotes and decays them (`maintain`, `clustering`)."""
