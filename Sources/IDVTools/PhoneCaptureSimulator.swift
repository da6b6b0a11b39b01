import FaceKit
import Foundation
import Imaging

// What a phone's front camera records while its screen flashes an illumination sequence: a
// simulation for tests, the demo and the presence figures (docs/LIVENESS.md "Presence"). FaceKit
// only measures; this module fakes the physics so the measurement can be exercised and its error
// rates estimated on real bona fide video — with the limits that docs/LIVENESS.md states (no real
// phone, no sunlight, no real display or camera pipeline).
//
// The model, in linear light (IEC 61966-2-1 decoding of the source frame):
//
//     raw(x, t) = p(x) ⊙ (a + r(x) · M c(t)) + s(x) · r(x) · M c(t)
//
// - p(x): the source frame's pixel, taken as the diffuse reflectance under neutral light (the
//   recorded person's own skin, hair and clothes: skin reflectance comes from the clips);
// - a: the ambient illuminant's colour (a black body of `ambientKelvin`, green channel 1);
// - r(x) = E_screen(x) / E_ambient: the screen's illuminance over the ambient one, E_screen = L·A/d²
//   (screen luminance L, area A, distance d: `faceDistanceM` on the head, a little more on the
//   torso, `backgroundDistanceM` elsewhere; soft ellipses around the tracked face box);
// - c(t): the screen colour (linear) shown `displayLatencyMs` (+ an attack's delay) before t,
//   averaged over the exposure `exposureMs`; M mixes the display primaries into the camera's
//   channels (cross-talk `crosstalk`);
// - s(x): a specular part on the face (`specular`: a fraction of the screen's light mirrored
//   whatever the skin's colour).
//
// The surface in front of the camera (`PhoneCaptureSimulator.Surface`, a parameter of `capture`):
// the model above is `.person`, a 3D person (head and torso at face distance, a background farther
// away, skin specular on the face). Two presentation attacks fill the camera's view with a flat
// surface instead, every pixel of it at about the same distance from the phone's screen (taken as
// `faceDistanceM`, where a face would be):
//
// - `.printFillingView(gloss:)`, a photo print: the screen's light multiplies face and background
//   alike, with the paper's gloss a uniform mirrored part on the whole sheet,
//
//       raw(x, t) = p(x) ⊙ (a + r_face · M c(t)) + gloss · r_face · M c(t)
//
//   (matte paper gloss ≈ 0, glossy photo paper up to a few per cent);
// - `.screenFillingView(glare:)`, a replay display: it emits its picture, p(x) ⊙ a (a: the display's
//   white, taken at the level a white reflector has under the scene's ambient light, so that
//   `ambientLux` 50–1 000 stands for a display of about 16–320 nits, its white point the ambient's
//   colour), and its glass mirrors the phone's flashes as a uniform additive glare,
//
//       raw(x, t) = p(x) ⊙ a + glare · r_face · M c(t)
//
//   (glossy glass reflects about 0.04–0.06, an anti-glare or matte finish 0.01–0.02). The additive
//   term moves the face-to-background log ratio wherever the two differ in brightness (the darker
//   region the more), so what the check makes of it is a measurement, not a foregone conclusion;
// - `.printHeld(gloss:margin:)`, a print smaller than the view held at face distance with the room
//   around it: inside the sheet (the tracked face box widened by `margin` box widths left and right
//   and `margin` box heights above and below) as `.printFillingView`; outside it the frame's own
//   pixels stand for the room, at `backgroundDistanceM`: raw(x, t) = p(x) ⊙ (a + r_back · M c(t)).
//
// Then the camera: grey-world auto white balance and auto exposure (to the source frame's mean
// level), each following its target with a time constant; shot and read noise growing in low light;
// sRGB encoding, 8 bits, JPEG. The frame times the client would report carry a timestamp offset
// and jitter.

/// A simulated scene, display and camera: every parameter of `PhoneCaptureSimulator`.
public struct PhoneCaptureScene: Sendable, Codable, Hashable {
    /// Ambient illuminance on the face, lux (indoors 50–1 000; overcast daylight 1 000–10 000;
    /// direct sun up to 100 000).
    public var ambientLux: Double
    /// Colour temperature of the ambient light, kelvin (2 700 warm bulb … 6 500 daylight).
    public var ambientKelvin: Double
    /// Screen luminance at full white, cd/m² (a phone at maximum brightness 350–800).
    public var screenNits: Double
    /// Lit screen area, m² (a 6.1-inch 19.5:9 phone: about 0.0091).
    public var screenAreaM2: Double
    /// Screen to face, metres (a selfie at arm's length: 0.22–0.45).
    public var faceDistanceM: Double
    /// Screen to the background behind the head, metres.
    public var backgroundDistanceM: Double
    /// Fraction of the screen's light the face mirrors (skin's specular reflection), 0…0.1.
    public var specular: Double
    /// How late the display shows a colour after the page asks for it, milliseconds.
    public var displayLatencyMs: Double
    /// Exposure time of each frame, milliseconds.
    public var exposureMs: Double
    /// The camera's capture timestamps minus the true middle of the exposure, milliseconds, and
    /// the standard deviation of their jitter.
    public var timestampOffsetMs: Double
    public var timestampJitterMs: Double
    /// Time constants of auto white balance and auto exposure, milliseconds.
    public var whiteBalanceTauMs: Double
    public var exposureTauMs: Double
    /// Shot noise (variance per unit of linear signal) and read noise (standard deviation), linear 0…1 units.
    public var shotNoise: Double
    public var readNoise: Double
    /// Fraction of each display primary seen by the camera's other channels.
    public var crosstalk: Double
    /// JPEG quality of the frames (1–100).
    public var jpegQuality: Int

    /// A scene drawn from the development/evaluation distribution (docs/LIVENESS.md "Presence"):
    /// ambient light log-uniform in `ambientLux`, everything else uniform in the ranges above.
    public static func random(using g: inout SplitMix64, ambientLux: ClosedRange<Double> = 50...1000) -> PhoneCaptureScene {
        let lux = exp(g.uniform(log(ambientLux.lowerBound), log(ambientLux.upperBound)))
        // Less light → longer exposure and more gain (noise); the camera stays at 1/30 s or faster.
        let exposure = min(33, max(4, 33 * pow(200 / lux, 0.5) * g.uniform(0.7, 1.0)))
        let noiseScale = min(3, max(0.5, (300 / lux).squareRoot()))
        return PhoneCaptureScene(ambientLux: lux, ambientKelvin: g.uniform(2700, 6500), screenNits: g.uniform(350, 800),
                                 screenAreaM2: g.uniform(0.0075, 0.0115), faceDistanceM: g.uniform(0.22, 0.45),
                                 backgroundDistanceM: g.uniform(0.8, 3.0), specular: g.uniform(0.01, 0.05),
                                 displayLatencyMs: g.uniform(10, 60), exposureMs: exposure,
                                 timestampOffsetMs: g.uniform(-20, 20), timestampJitterMs: g.uniform(1, 6),
                                 whiteBalanceTauMs: g.uniform(250, 1500), exposureTauMs: g.uniform(150, 800),
                                 shotNoise: g.uniform(2e-4, 1e-3) * noiseScale, readNoise: g.uniform(0.0015, 0.004) * noiseScale,
                                 crosstalk: g.uniform(0.03, 0.15), jpegQuality: Int(g.uniform(75, 93)))
    }

    /// The screen's illuminance over the ambient one at `distance` metres.
    public func screenRatio(at distance: Double) -> Double {
        screenNits * screenAreaM2 / (distance * distance) / ambientLux
    }
}

/// A simulated capture: the frames as the client would upload them and their capture times.
public struct SimulatedCapture: Sendable {
    /// JPEG frames, in capture order.
    public var frames: [Data]
    /// Each frame's capture time as the client reports it, milliseconds from the start of the sequence.
    public var frameTimesMs: [Double]
}

/// Renders the screen's reflection into real bona fide frames (see the model above).
public struct PhoneCaptureSimulator: Sendable {
    public var scene: PhoneCaptureScene

    /// What fills the camera's view (the model above).
    public enum Surface: Sendable, Hashable {
        /// A 3D person: face, head and torso at face distance, the background farther (the default).
        case person
        /// A flat print filling the view at face distance; `gloss`: the fraction of the screen's light
        /// its surface mirrors, the same on the whole sheet (0 matte … ≈ 0.03 glossy photo paper).
        case printFillingView(gloss: Double)
        /// A replay display filling the view: it emits the frames; `glare`: the fraction of the
        /// phone's flashes its glass reflects, the same on the whole display (0.01–0.02 anti-glare,
        /// 0.04–0.06 glossy glass).
        case screenFillingView(glare: Double)
        /// A print smaller than the view, held at face distance with the room (at the background's
        /// distance) around it; the sheet spans the face box widened by `margin` box widths on each
        /// side and `margin` box heights above and below.
        case printHeld(gloss: Double, margin: Double)
    }

    public init(scene: PhoneCaptureScene) { self.scene = scene }

    /// Evenly spaced capture times at `framesPerSecond`: the first at a random phase within the
    /// first frame interval, `count` frames.
    public static func frameTimes(count: Int, framesPerSecond: Double, using g: inout SplitMix64) -> [Double] {
        let interval = 1000 / framesPerSecond
        let phase = g.uniform(0, interval)
        return (0..<count).map { phase + Double($0) * interval }
    }

    /// The capture of `frames` (decoded, in order) taken at `captureTimesMs` (true exposure
    /// middles, milliseconds from the start of the sequence), the face of each frame in `faces`
    /// (nil: the previous frame's; none at all: the frame's centre half), under `sequence` shown
    /// `delayMs` late (an attack that relays or re-renders the light: 0 for a bona fide capture),
    /// or with the screen dark (`sequence` nil: the same camera, no reflection — an injected recording);
    /// `surface`: what fills the view (a person, or a print or a replay display presenting `frames`).
    ///
    /// - Returns: JPEG frames and the times a client would report (with the scene's offset and jitter).
    /// - Throws: `ImageError` when a frame cannot be encoded.
    public func capture(frames: [Image], captureTimesMs: [Double], faces: [FaceBox?], sequence: IlluminationSequence?,
                        delayMs: Double = 0, surface: Surface = .person, seed: UInt64) throws -> SimulatedCapture {
        precondition(frames.count == captureTimesMs.count && frames.count == faces.count, "one time and one face (or nil) per frame")
        var g = SplitMix64(seed: seed)
        let s = scene
        let ambient = Self.blackBody(kelvin: s.ambientKelvin)
        let mix = Self.crosstalkMatrix(s.crosstalk)
        let lin = IlluminationSample.linear
        var lastFace: FaceBox?
        var awb: [Double]?
        var ae: Double?
        var previousTime = captureTimesMs.first ?? 0
        var out: [Data] = []
        var reported: [Double] = []
        out.reserveCapacity(frames.count)
        for (index, frame) in frames.enumerated() {
            let w = frame.width, h = frame.height
            let rgb = frame.rgbPixels
            lastFace = faces[index] ?? lastFace
            let face = lastFace ?? FaceBox(left: Double(w) * 0.25, top: Double(h) * 0.2, right: Double(w) * 0.75, bottom: Double(h) * 0.75)
            let t = captureTimesMs[index]
            // The screen colour the exposure integrates, in camera channels.
            var c = [0.0, 0.0, 0.0]
            if let sequence {
                let subSamples = 8
                for k in 0..<subSamples {
                    let shown = t - s.exposureMs / 2 + s.exposureMs * (Double(k) + 0.5) / Double(subSamples) - s.displayLatencyMs - delayMs
                    // Before the sequence the page shows its own (dark grey) screen; after it, the same.
                    let colour = sequence.step(at: shown).map { sequence.steps[$0].linear } ?? [0.05, 0.05, 0.05]
                    for ch in 0..<3 { c[ch] += colour[ch] / Double(subSamples) }
                }
            } else {
                c = [0.05, 0.05, 0.05]
            }
            let cam = (0..<3).map { i in (0..<3).reduce(0.0) { $0 + mix[i][$1] * c[$1] } }
            let rFace = s.screenRatio(at: s.faceDistanceM), rTorso = s.screenRatio(at: s.faceDistanceM + 0.08)
            let rBack = s.screenRatio(at: s.backgroundDistanceM)
            // Head (face and hair) and torso as soft ellipses around the face box.
            let cx = (face.left + face.right) / 2, cy = (face.top + face.bottom) / 2
            let fw = max(8, face.width), fh = max(8, face.height)
            var raw = [Double](repeating: 0, count: w * h * 3)
            var sum = [0.0, 0.0, 0.0]
            switch surface {
            case .person: break
            case .printFillingView(let gloss):
                // Paper at face distance everywhere: the screen's light on every pixel alike.
                for i in 0..<(w * h) {
                    for ch in 0..<3 {
                        let v = lin[Int(rgb[i * 3 + ch])] * (ambient[ch] + rFace * cam[ch]) + gloss * rFace * cam[ch]
                        raw[i * 3 + ch] = v
                        sum[ch] += v
                    }
                }
            case .printHeld(let gloss, let margin):
                // The sheet at face distance; the room, farther, around it.
                let x0 = face.left - margin * fw, x1 = face.right + margin * fw
                let y0 = face.top - margin * fh, y1 = face.bottom + margin * fh
                for y in 0..<h {
                    let inY = Double(y) >= y0 && Double(y) < y1
                    for x in 0..<w {
                        let onSheet = inY && Double(x) >= x0 && Double(x) < x1
                        let r = onSheet ? rFace : rBack, sheen = onSheet ? gloss * rFace : 0
                        let i = (y * w + x) * 3
                        for ch in 0..<3 {
                            let v = lin[Int(rgb[i + ch])] * (ambient[ch] + r * cam[ch]) + sheen * cam[ch]
                            raw[i + ch] = v
                            sum[ch] += v
                        }
                    }
                }
            case .screenFillingView(let glare):
                // The display's own light, and its glass's uniform glare of the flashes.
                for i in 0..<(w * h) {
                    for ch in 0..<3 {
                        let v = lin[Int(rgb[i * 3 + ch])] * ambient[ch] + glare * rFace * cam[ch]
                        raw[i * 3 + ch] = v
                        sum[ch] += v
                    }
                }
            }
            for y in 0..<h where surface == .person {
                let dyHead = (Double(y) - (cy - 0.1 * fh)) / (1.05 * fh)
                let dyTorso = (Double(y) - (cy + 1.9 * fh)) / (1.3 * fh)
                let dyFace = (Double(y) - cy) / (0.5 * fh)
                for x in 0..<w {
                    let dx = Double(x) - cx
                    let head = Self.softInside(dx / (0.85 * fw), dyHead)
                    let torso = Self.softInside(dx / (1.7 * fw), dyTorso)
                    let skin = Self.softInside(dx / (0.45 * fw), dyFace)
                    let near = max(head, torso)
                    let r = head >= torso ? head * rFace + (1 - head) * rBack : torso * rTorso + (1 - torso) * rBack
                    let rr = near > 0 ? r : rBack
                    let i = (y * w + x) * 3
                    for ch in 0..<3 {
                        let p = lin[Int(rgb[i + ch])]
                        let v = p * (ambient[ch] + rr * cam[ch]) + skin * s.specular * rFace * cam[ch]
                        raw[i + ch] = v
                        sum[ch] += v
                    }
                }
            }
            let n = Double(w * h)
            let mean = sum.map { $0 / n }
            // Auto white balance (grey world) and auto exposure (to the source frame's mean level),
            // each moving towards its target with its time constant; settled on the first frame.
            let wbTarget = mean.map { mean[1] / max($0, 1e-6) }
            let srcLevel = (0..<3).reduce(0.0) { acc, ch in acc + [0.2126, 0.7152, 0.0722][ch] * Self.meanLinear(rgb, channel: ch, lin) }
            let balanced = (0..<3).reduce(0.0) { $0 + [0.2126, 0.7152, 0.0722][$1] * mean[$1] * wbTarget[$1] }
            let aeTarget = srcLevel / max(balanced, 1e-6)
            let dt = max(0, t - previousTime)
            previousTime = t
            if let a = awb {
                let k = 1 - exp(-dt / s.whiteBalanceTauMs)
                awb = (0..<3).map { a[$0] + k * (wbTarget[$0] - a[$0]) }
            } else { awb = wbTarget }
            if let e = ae { ae = e + (1 - exp(-dt / s.exposureTauMs)) * (aeTarget - e) } else { ae = aeTarget }
            let gains = awb!.map { $0 * ae! }
            // Noise, sRGB encoding, 8 bits.
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            for i in 0..<(w * h) {
                for ch in 0..<3 {
                    let v = raw[i * 3 + ch] * gains[ch]
                    let sigma = (s.shotNoise * max(0, v) + s.readNoise * s.readNoise).squareRoot()
                    let noisy = min(1, max(0, v + sigma * g.gaussian()))
                    pixels[i * 3 + ch] = Self.encode(noisy)
                }
            }
            out.append(try Image(rgb: pixels, width: w, height: h).jpegData(quality: s.jpegQuality))
            reported.append(t + s.timestampOffsetMs + s.timestampJitterMs * g.gaussian())
        }
        // Reported times never go backwards (a client sorts its frames by time).
        for i in 1..<max(1, reported.count) where reported[i] < reported[i - 1] { reported[i] = reported[i - 1] }
        return SimulatedCapture(frames: out, frameTimesMs: reported)
    }

    /// 1 well inside the unit circle of (u, v), 0 outside, a linear ramp over the last 15 %.
    static func softInside(_ u: Double, _ v: Double) -> Double {
        let d = (u * u + v * v).squareRoot()
        return d <= 0.85 ? 1 : d >= 1 ? 0 : (1 - d) / 0.15
    }

    static func meanLinear(_ rgb: [UInt8], channel: Int, _ lin: [Double]) -> Double {
        var s = 0.0, n = 0
        var i = channel
        while i < rgb.count { s += lin[Int(rgb[i])]; n += 1; i += 3 * 7 }
        return n > 0 ? s / Double(n) : 0
    }

    /// Linear 0…1 → sRGB code value.
    static func encode(_ v: Double) -> UInt8 {
        let c = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055
        return UInt8(max(0, min(255, (c * 255).rounded())))
    }

    /// The colour of a black body at `kelvin` in linear sRGB, green = 1 (Tanner Helland's fit of the
    /// CIE 1964 10° blackbody colours, linearised): 2 700 K ≈ (1.0, 1, 0.42) / green …, 6 500 K ≈ neutral.
    static func blackBody(kelvin: Double) -> [Double] {
        let t = kelvin / 100
        let r = t <= 66 ? 255 : 329.698727446 * pow(t - 60, -0.1332047592)
        let g = t <= 66 ? 99.4708025861 * log(t) - 161.1195681661 : 288.1221695283 * pow(t - 60, -0.0755148492)
        let b = t >= 66 ? 255 : t <= 19 ? 0 : 138.5177312231 * log(t - 10) - 305.0447927307
        let c = [r, g, b].map { min(255, max(0, $0)) }.map { IlluminationSample.linear[Int($0.rounded())] }
        return c.map { $0 / max(c[1], 1e-6) }
    }

    /// Display primaries → camera channels: each primary leaks `leak` into its spectral neighbour
    /// channel and a third of that into the far one.
    static func crosstalkMatrix(_ leak: Double) -> [[Double]] {
        [[1, leak, leak / 3], [leak, 1, leak], [leak / 3, leak, 1]]
    }
}
