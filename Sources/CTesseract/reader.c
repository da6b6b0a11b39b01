// Tesseract's C API behind ctesseract.h (see there).
#include "ctesseract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tesseract/capi.h>

// libtesseract is built with OpenMP (libgomp): recognition would spread over every core of a
// machine the server shares with its other requests. One thread per recognition, set on the calling
// thread (OpenMP's thread count is per thread); weak so a build without OpenMP links as well.
// Tesseract's LSTM asks for its own thread count in `num_threads` clauses, which omp_set_num_threads
// cannot lower; no active parallel levels (max-active-levels 0, libgomp's global setting) makes every
// region run on the calling thread. Measured: 0.55 s user + 0.06 s sys instead of 1.17 + 0.77 s for one
// page under load (OMP_THREAD_LIMIT=1 gives the former).
extern void omp_set_num_threads(int) __attribute__((weak));
extern void omp_set_max_active_levels(int) __attribute__((weak));

struct ct_reader {
    TessBaseAPI *api;
    int32_t width, height;   // the image of ct_reader_begin (0: none)
};

static void set_message(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

ct_reader *ct_reader_create(const char *datapath, const char *language, int psm, const char *whitelist,
                            int universal_ambigs, char *message, size_t message_size) {
    TessBaseAPI *api = TessBaseAPICreate();
    if (!api) { set_message(message, message_size, "cannot create a Tesseract instance"); return NULL; }
    // LSTM only: the legacy engine's universal ambiguities are never read (ambigs.cpp).
    ct_skip_universal_ambigs(!universal_ambigs);
    int status = TessBaseAPIInit2(api, datapath, language ? language : "eng", OEM_LSTM_ONLY);
    ct_skip_universal_ambigs(0);
    if (status != 0) {
        char text[256];
        snprintf(text, sizeof text, "Tesseract cannot load language '%s' from %s (install tesseract-ocr-eng)",
                 language ? language : "eng", datapath ? datapath : "its default tessdata");
        set_message(message, message_size, text);
        TessBaseAPIDelete(api);
        return NULL;
    }
    TessBaseAPISetPageSegMode(api, (TessPageSegMode)psm);
    if (whitelist) TessBaseAPISetVariable(api, "tessedit_char_whitelist", whitelist);
    // Nothing on stdout/stderr from the library (it would otherwise print "Estimating resolution…").
    TessBaseAPISetVariable(api, "debug_file", "/dev/null");
    ct_reader *r = (ct_reader *)calloc(1, sizeof *r);
    if (!r) { TessBaseAPIEnd(api); TessBaseAPIDelete(api); set_message(message, message_size, "out of memory"); return NULL; }
    r->api = api;
    return r;
}

void ct_reader_destroy(ct_reader *reader) {
    if (!reader) return;
    TessBaseAPIEnd(reader->api);
    TessBaseAPIDelete(reader->api);
    free(reader);
}

// The words of the recognition just made, as ct_word (see ctesseract.h); `line_base` is added to
// each word's line index.
static int32_t collect_words(TessBaseAPI *api, ct_word *out, int32_t capacity, int32_t line_base) {
    int32_t n = 0, line = -1;
    TessResultIterator *it = TessBaseAPIGetIterator(api);
    if (!it) return 0;
    TessPageIterator *page = TessResultIteratorGetPageIterator(it);
    do {
        if (TessPageIteratorIsAtBeginningOf(page, RIL_TEXTLINE)) line++;
        char *text = TessResultIteratorGetUTF8Text(it, RIL_WORD);
        if (!text) continue;
        if (n < capacity) {
            ct_word *w = &out[n];
            memset(w, 0, sizeof *w);
            snprintf(w->text, sizeof w->text, "%s", text);
            TessPageIteratorBoundingBox(page, RIL_WORD, &w->left, &w->top, &w->right, &w->bottom);
            w->confidence = TessResultIteratorConfidence(it, RIL_WORD);
            w->line = line_base + (line < 0 ? 0 : line);
            // The word's symbols: a copy of the iterator walked symbol by symbol to the word's end.
            TessResultIterator *sym = TessResultIteratorCopy(it);
            TessPageIterator *sp = TessResultIteratorGetPageIterator(sym);
            int32_t k = 0;
            do {
                if (k < CT_MAX_SYMBOLS) w->symbol_confidence[k] = TessResultIteratorConfidence(sym, RIL_SYMBOL);
                k++;
            } while (TessPageIteratorNext(sp, RIL_SYMBOL) && !TessPageIteratorIsAtBeginningOf(sp, RIL_WORD));
            w->symbol_count = k < CT_MAX_SYMBOLS ? k : CT_MAX_SYMBOLS;
            TessResultIteratorDelete(sym);
            n++;
        }
        TessDeleteText(text);
    } while (TessResultIteratorNext(it, RIL_WORD));
    TessResultIteratorDelete(it);
    return n;
}

static void one_thread(void) {
    if (omp_set_num_threads) omp_set_num_threads(1);
    if (omp_set_max_active_levels) omp_set_max_active_levels(0);
}

int32_t ct_reader_words(ct_reader *reader, const uint8_t *grey, int32_t width, int32_t height, int32_t stride,
                        int32_t ppi, ct_word *out, int32_t capacity, char *message, size_t message_size) {
    if (!reader || !grey || width < 1 || height < 1 || stride < width || capacity < 0) {
        set_message(message, message_size, "invalid argument");
        return -1;
    }
    TessBaseAPI *api = reader->api;
    one_thread();
    TessBaseAPISetImage(api, grey, width, height, 1, stride);
    if (ppi > 0) TessBaseAPISetSourceResolution(api, ppi);
    if (TessBaseAPIRecognize(api, NULL) != 0) {
        set_message(message, message_size, "Tesseract could not recognise the image");
        TessBaseAPIClear(api);
        return -1;
    }
    int32_t n = collect_words(api, out, capacity, 0);
    TessBaseAPIClear(api);
    return n;
}

int32_t ct_reader_begin(ct_reader *reader, const uint8_t *grey, int32_t width, int32_t height, int32_t stride, int32_t ppi,
                        ct_box *lines, int32_t capacity, char *message, size_t message_size) {
    if (!reader || !grey || width < 1 || height < 1 || stride < width || capacity < 0 || (capacity > 0 && !lines)) {
        set_message(message, message_size, "invalid argument");
        return -1;
    }
    TessBaseAPI *api = reader->api;
    one_thread();
    TessBaseAPISetImage(api, grey, width, height, 1, stride);
    if (ppi > 0) TessBaseAPISetSourceResolution(api, ppi);
    reader->width = width;
    reader->height = height;
    TessPageIterator *it = TessBaseAPIAnalyseLayout(api);
    int32_t n = 0;
    if (it) {
        do {
            int l, t, r, b;
            if (n < capacity && TessPageIteratorBoundingBox(it, RIL_TEXTLINE, &l, &t, &r, &b)) {
                lines[n].left = l; lines[n].top = t; lines[n].right = r; lines[n].bottom = b;
                n++;
            }
        } while (TessPageIteratorNext(it, RIL_TEXTLINE));
        TessPageIteratorDelete(it);
    }
    return n;
}

int32_t ct_reader_recognise(ct_reader *reader, int32_t psm, ct_box box, int32_t line_base,
                            ct_word *out, int32_t capacity, char *message, size_t message_size) {
    if (!reader || capacity < 0 || reader->width < 1) {
        set_message(message, message_size, "invalid argument (no image: call ct_reader_begin first)");
        return -1;
    }
    TessBaseAPI *api = reader->api;
    one_thread();
    int32_t l = box.left < 0 ? 0 : box.left, t = box.top < 0 ? 0 : box.top;
    int32_t r = box.right > reader->width ? reader->width : box.right, b = box.bottom > reader->height ? reader->height : box.bottom;
    if (r <= l || b <= t) return 0;
    TessPageSegMode saved = TessBaseAPIGetPageSegMode(api);
    TessBaseAPISetPageSegMode(api, (TessPageSegMode)psm);
    TessBaseAPISetRectangle(api, l, t, r - l, b - t);
    int status = TessBaseAPIRecognize(api, NULL);
    TessBaseAPISetPageSegMode(api, saved);
    if (status != 0) {
        set_message(message, message_size, "Tesseract could not recognise the region");
        return -1;
    }
    return collect_words(api, out, capacity, line_base);
}

void ct_reader_end(ct_reader *reader) {
    if (!reader) return;
    TessBaseAPIClear(reader->api);
    reader->width = reader->height = 0;
}
