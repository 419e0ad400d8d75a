//! A KVell-like engine (Lepers et al., SOSP'19; TOS 3.4, 5.4.2). To be
//! built (issue 16).
