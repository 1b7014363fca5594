//! Round trips through the writer and the reader.
