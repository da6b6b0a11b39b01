// Skipping Tesseract's universal ambiguities for LSTM-only recognisers (see ctesseract.h,
// `ct_reader_create`'s `universal_ambigs`).
//
// Why: `Tesseract::init_tesseract_lang_data` (tesseract 5.3, src/ccmain/tessedit.cpp:216) calls
// `UnicharAmbigs::LoadUniversal` whenever the legacy engine is compiled in, as it is in Debian's
// libtesseract5, whatever the engine mode: it parses the ~1 MB universal ambiguity table compiled into
// the library (kUniversalAmbigsFile), 0.3–0.9 s of one core — about 90 % of `TessBaseAPIInit2`
// (measured 0.82–1.00 s with it, 0.08–0.10 s without, same machine, same load). No parameter, config
// file or init variant reaches that call: `tessedit_init_config_only` returns before the LSTM model
// loads; everything else runs after. The table is read only by the legacy engine: the dictionary's
// `NoDangerousAmbig` (called from the legacy segmentation search, src/wordrec/language_model.cpp),
// the adaptive classifier (src/classify/adaptmatch.cpp) and box training (src/ccmain/applybox.cpp).
// An LSTM-only recogniser (OEM_LSTM_ONLY, the only mode ct_reader_create uses) never reads it; its
// recogniser carries its own dictionary and character set, not these tables.
//
// How: this file defines `tesseract::UnicharAmbigs::LoadUniversal` itself. libtesseract calls the
// method through its PLT, so the definition in the executable (exported to the dynamic symbol table
// because libtesseract defines the same name) takes precedence. While a thread is inside
// `ct_reader_create` with `universal_ambigs` = 0 (a thread-local flag), the call returns without
// loading (the tables stay as `InitUnicharAmbigs` made them: empty, sized to the character set);
// at any other time, or on any other thread, it forwards to libtesseract's own definition, found
// with dlsym(RTLD_NEXT). Fail safe: if the interposition does not take (another linker, a static or
// -Bsymbolic libtesseract) libtesseract's own method runs and the only effect is the cost;
// `ct_universal_ambigs_skipped` counts the skips so a test sees whether it took. Tests compare the
// words, boxes and confidences recognised with and without the skip on real visual zones.
#include "ctesseract.h"

#include <atomic>
#include <dlfcn.h>

namespace tesseract {
class UNICHARSET;
// The declaration of tesseract/ambigs.h (not an installed header) that the definition below matches:
// `void LoadUniversal(const UNICHARSET &encoder_set, UNICHARSET *unicharset);`, a non-virtual member.
class UnicharAmbigs {
public:
    void LoadUniversal(const UNICHARSET &encoder_set, UNICHARSET *unicharset);
};
} // namespace tesseract

namespace {
thread_local bool skip_universal = false;
std::atomic<int32_t> skipped{0};
using LoadUniversalFunction = void (*)(tesseract::UnicharAmbigs *, const tesseract::UNICHARSET &, tesseract::UNICHARSET *);
} // namespace

void tesseract::UnicharAmbigs::LoadUniversal(const UNICHARSET &encoder_set, UNICHARSET *unicharset) {
    if (skip_universal) {
        skipped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // libtesseract's own definition (Itanium C++ ABI: `this` is the first argument).
    static const LoadUniversalFunction original = reinterpret_cast<LoadUniversalFunction>(
        dlsym(RTLD_NEXT, "_ZN9tesseract13UnicharAmbigs13LoadUniversalERKNS_10UNICHARSETEPS1_"));
    if (original) original(this, encoder_set, unicharset);
}

extern "C" void ct_skip_universal_ambigs(int skip) { skip_universal = skip != 0; }

extern "C" int32_t ct_universal_ambigs_skipped(void) { return skipped.load(std::memory_order_relaxed); }
