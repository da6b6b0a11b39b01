// CTesseract — a plain C interface over Tesseract's C API (Debian libtesseract-dev, tessdata
// `tesseract-ocr-eng`) for the document reader's visual-zone text: one recogniser per handle,
// recognising a grey image and returning its words with boxes and confidences. Compiled at -O2 in
// every configuration; the handle is not thread-safe (use one per thread or guard it).
#ifndef CTESSERACT_H
#define CTESSERACT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_reader ct_reader;

/// One recognised word: UTF-8 text, its box (pixels of the image given), Tesseract's confidence
/// (0–100) of the word and of each of its first `CT_MAX_SYMBOLS` symbols.
#define CT_MAX_WORD_BYTES 96
#define CT_MAX_SYMBOLS 32
typedef struct ct_word {
    char text[CT_MAX_WORD_BYTES];
    int32_t left, top, right, bottom;
    float confidence;
    int32_t symbol_count;
    float symbol_confidence[CT_MAX_SYMBOLS];
    int32_t line;   ///< 0-based text-line index within the image
} ct_word;

/// Creates a recogniser for `language` (e.g. "eng") from `datapath` (NULL: Tesseract's default /
/// TESSDATA_PREFIX), LSTM engine only, page segmentation `psm` (Tesseract's PSM numbers, e.g. 6 =
/// one uniform block, 11 = sparse text). `whitelist` (may be NULL) restricts the characters.
/// `universal_ambigs` 0 skips the legacy engine's universal ambiguity table, which Tesseract loads
/// at every init although LSTM recognition never reads it (0.3–0.9 s of one core, ~90 % of the init;
/// ambigs.cpp says how and why); 1 loads it as Tesseract does (the A/B reference of the tests).
/// NULL on failure, with the reason in `message`.
ct_reader *ct_reader_create(const char *datapath, const char *language, int psm, const char *whitelist,
                            int universal_ambigs, char *message, size_t message_size);

/// How many times the universal ambiguity table was skipped in this process (0 after a
/// `universal_ambigs` = 0 create means the skip did not take and Tesseract loaded the table).
int32_t ct_universal_ambigs_skipped(void);
/// Sets the calling thread's skip flag (ambigs.cpp); used by ct_reader_create only.
void ct_skip_universal_ambigs(int skip);
void ct_reader_destroy(ct_reader *reader);

/// Recognises an 8-bit grey image (`width` × `height`, rows `stride` bytes apart) at `ppi` dots per
/// inch and writes up to `capacity` words to `out`; returns the number of words (≥ 0), or −1 on
/// failure (reason in `message`).
int32_t ct_reader_words(ct_reader *reader, const uint8_t *grey, int32_t width, int32_t height, int32_t stride,
                        int32_t ppi, ct_word *out, int32_t capacity, char *message, size_t message_size);

/// A box in pixels of the image given to `ct_reader_begin` (right and bottom exclusive).
typedef struct ct_box { int32_t left, top, right, bottom; } ct_box;

/// Region by region recognition of one image (the visual zone's names line by line):
/// `ct_reader_begin` gives the image (kept until `ct_reader_end`) and runs Tesseract's layout
/// analysis only, writing up to `capacity` text-line boxes (top to bottom as Tesseract orders them)
/// to `lines`; returns their number, or −1 (reason in `message`). `ct_reader_recognise` then
/// recognises one region of that image with page segmentation `psm` (7 = one text line, 6 = one
/// block) and writes its words as `ct_reader_words` does, line indices counted from `line_base`;
/// −1 on failure. Boxes of words are in the whole image's pixels. `ct_reader_end` releases the image.
int32_t ct_reader_begin(ct_reader *reader, const uint8_t *grey, int32_t width, int32_t height, int32_t stride, int32_t ppi,
                        ct_box *lines, int32_t capacity, char *message, size_t message_size);
int32_t ct_reader_recognise(ct_reader *reader, int32_t psm, ct_box box, int32_t line_base,
                            ct_word *out, int32_t capacity, char *message, size_t message_size);
void ct_reader_end(ct_reader *reader);

#ifdef __cplusplus
}
#endif

#endif
