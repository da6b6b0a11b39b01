/// ICAO Doc 9303 machine-readable zones: formats (TD1, TD2, TD3, MRV-A, MRV-B), check digits,
/// parsing and OCR-error correction. Pure Swift, no dependency beyond the standard library.
public enum MRZ {}
