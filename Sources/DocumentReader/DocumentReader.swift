internal import CCairo

/// Page image → document report (MRZ, fields, portrait, checks), and the specimen generator.
///
/// Pipeline (`DocumentReader.read(pages:options:)`):
/// 1. decode JPEG/PNG with Imaging, EXIF orientation applied (`DocumentImage`);
/// 2. locate the MRZ in any orientation and rectify it into fixed-pitch cells (`MRZLocaliser`);
/// 3. classify every cell with the OCR-B classifier (`OCRBClassifier`, LDA trained at start-up from
///    Cairo-rendered `fonts-ocr-b` glyphs, ~0.3–0.8 s once per process) → lines, per-cell
///    confidences and runner-ups (`MRZReader`, `MRZReading`);
/// 4. the report's stages (`ReadingPipeline.swift`, one file each): the MRZ parsed and corrected
///    with check digits (`MRZ.MRZParser`) and checked (`MRZStage`), its image quality
///    (`QualityStage`), the page images and the portrait (FaceKit face detection, `PortraitStage`),
///    the names against the visual zone (Tesseract, `NameStage`) — evidence only: the server's
///    policy (`WorkflowPolicy.judge`) gives the verdict;
/// 5. views: `DocumentReport.seed002` / `.seed003` (ARCHITECTURE.md §5).
///
/// The specimen generator (`SpecimenGenerator`, `SpecimenIdentity`, `Augmentation`) renders
/// fictional TD1/TD3 documents with Cairo for tests and corpora (`idvd specimen`).
public enum DocumentReader {
    /// The Cairo version used by the specimen generator, e.g. "1.16.0".
    public static var cairoVersion: String { String(cString: cairo_version_string()) }
}
