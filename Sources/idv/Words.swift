import Foundation
import IDVKit

/// Every sentence the sample app shows a person, in one table (the hosted page's twin is
/// `Sources/IDVWeb/Assets/words.js`). Where a codelab gives the words, they are its exact strings,
/// with the seed file and line beside each (`../shared/seeds/00N_*.txt`); the rest is marked
/// "ours" (the codelabs keep those texts in a storyboard they do not show). Screens look words up
/// here; the server's own sentences (error strings, document findings) are shown as the server
/// sends them, since they are made from the server's one table (`Wording.swift`).
enum Words {
    // MARK: Side menu (the dashboard)

    enum Menu {
        static let title = "Dashboard"                                   // seed 000 L734 (MenuItem "Dashboard")
        static let kyc = "Activated Customer KYC"                        // seed 000 L736
        static let documentScan = "Additional Document Scan"             // seed 003 L84 (the menu label itself is storyboard text; ours)
        static let biometricAuthentication = "🔐 Biometric Authentication" // seed 001 L1097
        static let optIn = "✅ Biometric Opt-In"                          // seed 004 L1714 (icon and title)
        static let optOut = "❌ Biometric Opt-Out"                        // seed 004 L1715 (icon and title)
        static let templateStatus = "Biometric Template Status"          // seed 001 L836 (ours as a menu item)
        static let logOff = "Log Off"                                    // ours
    }

    // MARK: Seed 000 — ActivatedCustomerKYCViewController (L800–L1081)

    enum KYC {
        static let title = "Activated Customer KYC"                                         // seed 000 L911
        static let subtitle = "Complete your identity verification"                          // seed 000 L912
        static let infoTitle = "What is KYC?"                                                // seed 000 L914
        static let infoText = "KYC (Know Your Customer) is a verification process to confirm your identity. This helps ensure the security of your account and complies with regulatory requirements."   // seed 000 L915
        static let steps = ["1. Document Scan",                                              // seed 000 L917
                            "2. Confirm Document Details",                                   // seed 000 L918
                            "3. Selfie Capture",                                             // seed 000 L919
                            "4. Biometric Consent"]                                          // seed 000 L920
        static let requirements = ["• Have a valid government-issued ID ready",               // seed 000 L922
                                   "• Ensure good lighting for document scanning",            // seed 000 L923
                                   "• Position your face clearly for selfie capture",         // seed 000 L924
                                   "• Allow camera permissions when prompted"]                // seed 000 L925
        static let start = "Start KYC Verification"                                          // seed 000 L1064
        static let busy = "Initiating..."                                                    // seed 000 L1060
        static let reason = "Post Login KYC"                                                 // seed 000 L1021
        static let initiateFailed = "Failed to initiate KYC verification"                    // seed 000 L1031
        static let successTitle = "Success"                                                  // seed 000 L989
        static let errorTitle = "Error"                                                      // seed 000 L989
        static let success = "KYC verification completed successfully! Your identity has been verified."   // seed 000 L981
        /// Seed 000 L973 (`error.errorString ?? "Unknown error"`) and L977 (`status.statusMessage ?? "Server error"`).
        static func failed(_ why: String) -> String { "KYC verification failed: \(why)" }
        static let unknownError = "Unknown error"                                            // seed 000 L973
        static let serverError = "Server error"                                              // seed 000 L977
        static let goToDashboard = "Go to Dashboard"                                         // seed 000 L994
    }

    // MARK: Seed 003 — AdditionalDocumentScanViewController (L548–L860) and its result screen (L960–L1445)

    enum DocumentScan {
        static let title = "Additional Document Scan"                                        // ours (storyboard text, seed 003 L561)
        static let subtitle = "Scan another identity document to add it to your verified profile."   // ours
        static let start = "Start Additional Document Scan"                                  // seed 003 L770
        static let busy = "Starting..."                                                      // seed 003 L766
        static let reason = "Additional Document Verification"                               // seed 003 L742
        static let errorTitle = "Error"                                                      // seed 003 L689
        static let ok = "OK"                                                                 // seed 003 L817
        static let scanFailed = "Failed to scan document"                                    // seed 003 L690
        static let serverFailed = "Document scan failed"                                     // seed 003 L707
        static let startFailed = "Failed to start document scan"                             // seed 003 L755
        static let resultTitle = "Document Scan Result"                                      // ours (storyboard text)
        static let documentStatus = "Document Status"                                        // ours (statusLabel, storyboard text)
        static let errorHint = "Document validation failed. Please review details below."   // seed 003 L1129
        static let warningHint = "Document has warnings. Review details below."             // seed 003 L1132
        static func category(_ c: String) -> String { "Category: \(c)" }                     // seed 003 L1400
        static let isNFCDocument = "Is NFC Document"                                         // seed 003 L1274
        static let yes = "Yes", no = "No"                                                    // seed 003 L1274
        static let nfcScanStatus = "NFC Scan Status"                                         // seed 003 L1279
        static let nfcReason = "Reason"                                                      // seed 003 L1284
        static let done = "Done"                                                             // seed 003 L886, L1439 (handleDone)
    }

    // MARK: Seed 001 — ServerBiometricAuthenticationViewController (L672–L1048)

    enum ServerBiometric {
        static let title = "Biometric Authentication"                                        // seed 001 L1097 (menu title, without its icon)
        static let subtitle = "Verify your identity against your stored biometric template."  // ours (subtitleLabel, storyboard text)
        static let checking = "Checking Template Status..."                                  // seed 001 L1006
        static let busy = "Authenticating..."                                                // seed 001 L1011
        static let start = "Start Authentication"                                            // seed 001 L1016
        static let reason = "Server Biometric Authentication"                                // seed 001 L858
        static let checkErrorTitle = "Template Status Check Error"                           // seed 001 L783
        static func checkFailed(_ e: String) -> String { "Failed to check template status: \(e)" }   // seed 001 L783
        static let errorTitle = "Authentication Error"                                       // seed 001 L869, L922
        static func initiateFailed(_ e: String) -> String { "Failed to initiate authentication: \(e)" }   // seed 001 L869
        static func errorMessage(_ e: RDNAError) -> String { "\(e.errorString ?? "")\n\nError Code: \(e.longErrorCode)" }   // seed 001 L923
        static let failedTitle = "Authentication Failed"                                     // seed 001 L932
        static func statusMessage(_ s: RDNARequestStatus) -> String { "Status: \(s.statusMessage ?? "")\nStatus Code: \(s.statusCode)" }   // seed 001 L933
        static let completeTitle = "Authentication Complete"                                 // seed 001 L951
        static let complete = "Authentication completed successfully"                        // seed 001 L952
        static let successTitle = "✅ Authentication Success"                                // seed 001 L972
        static let failureTitle = "❌ Authentication Failed"                                 // seed 001 L988
        /// Seed 001 L973–L978 / L989–L994.
        static func result(_ displayText: String, useCase: String, transactionID: String, attemptsLeft: Int) -> String {
            "Biometric Result: \(displayText)\n\nUse Case: \(useCase)\nTransaction ID: \(transactionID)\nAttempts Left: \(attemptsLeft)"
        }
        static let unknown = "Unknown"                                                       // seed 001 L959
        static let notAvailable = "N/A"                                                      // seed 001 L963
        static let backToDashboard = "Back to Dashboard"                                     // seed 001 L981
        static let ok = "OK"                                                                 // seed 001 L1181
        static let disabledNote = "Please complete biometric opt-in first"                   // seed 001 L1140
    }

    /// The template status card (seed 001 L836–L845; seed 004's opt-in/opt-out status section shows
    /// the same status, whose texts the codelab keeps in its storyboard).
    enum TemplateStatus {
        static let existsTitle = "✅ Biometric Template Status"                              // seed 001 L836
        static let exists = "Your biometric template is stored on the server. You can proceed with authentication."   // seed 001 L837
        static let noneTitle = "⚠️ Biometric Template Status"                                // seed 001 L840
        static let none = "No biometric template found on the server. Please complete biometric opt-in first."   // seed 001 L841
        static func code(_ message: String, _ code: Int) -> String { "Status: \(message) (Code: \(code))" }   // seed 001 L845
        static func errorMessage(_ e: String) -> String { "Error: \(e)" }                   // seed 001 L780, L803
        static let templateExists = "Template exists"                                        // seed 004 L2043, L2172
        static let noTemplate = "No template"                                                // seed 004 L2041, L2100
    }

    // MARK: Seed 004 — BiometricOptInViewController / BiometricOptOutViewController, the password dialog

    enum OptIn {
        static let title = "Biometric Opt-In"                                                // seed 004 L1714
        static let subtitle = "Create a biometric template for faster, more secure authentication."   // ours (storyboard text)
        static let start = "Start Opt-In"                                                    // seed 004 L1876
        static let checking = "Checking Status..."                                           // seed 004 L1660 (opt-out's; opt-in's by symmetry)
        static let busy = "Processing..."                                                    // seed 004 L1663 (idem)
        static let disabledNote = "A biometric template already exists. Opt out first to create a new one."   // ours
        static func initiateFailed(_ e: String) -> String { "Failed to initiate opt-in: \(e)" }   // seed 004 L1147
        static let successTitle = "Success"                                                  // seed 004 L1337
        static let success = "Biometric template stored successfully! You can now use biometric authentication."   // seed 004 L1337
        static let failedTitle = "Opt-In Failed"                                             // seed 004 L1343
        static func confirmationFailed(_ e: String) -> String { "Failed to submit confirmation: \(e)" }   // seed 004 L1299
    }

    enum OptOut {
        static let title = "Biometric Opt-Out"                                               // seed 004 L1715
        static let subtitle = "Delete your biometric template from the server."              // ours (storyboard text)
        static let start = "Start Opt-Out"                                                   // seed 004 L1666
        static let checking = "Checking Status..."                                           // seed 004 L1660
        static let busy = "Processing..."                                                    // seed 004 L1663
        static let disabledNote = "No biometric template found. There is nothing to opt out of."   // ours (disabledMessageLabel, storyboard text)
        static func initiateFailed(_ e: String) -> String { "Failed to initiate opt-out: \(e)" }   // seed 004 L1529
        static let successTitle = "Success"                                                  // seed 004 L1637
        static let success = "Biometric template deleted successfully! You have opted out from biometric authentication."   // seed 004 L1637
        static let noneTitle = "No Template"                                                 // seed 004 L1642
        static let none = "No biometric template found. You have already opted out or never opted in."   // seed 004 L1642
        static let failedTitle = "Opt-Out Failed"                                            // seed 004 L1648
    }

    enum Common {
        static let errorTitle = "Error"                                                      // seed 004 L1106
        static func checkFailed(_ e: String) -> String { "Failed to check template status: \(e)" }   // seed 004 L1106
        static let ok = "OK"                                                                 // seed 003 L817
        static let close = "Close"                                                           // ours (the screens' × button)
    }

    /// `PasswordValidationDialogViewController` (seed 004 L387–L597).
    enum PasswordDialog {
        static let defaultTitle = "🔐 Authentication Required"                               // seed 004 L410
        static let defaultMessage = "Please verify your password to continue"                // seed 004 L413
        static let optInTitle = "🔐 Biometric Opt-In Authentication"                         // seed 004 L1187
        static let optInMessage = "Please verify your password to create biometric template" // seed 004 L1188
        static let optOutTitle = "🔐 Biometric Opt-Out Authentication"                       // seed 004 L1569
        static let optOutMessage = "Please verify your password to delete biometric template" // seed 004 L1570
        static let placeholder = "Enter your password"                                       // seed 004 L496
        static let submit = "Verify & Continue"                                              // seed 004 L569
        static let cancel = "Cancel"                                                         // seed 004 L591 (handleCancel; the title is storyboard text)
        static func attempts(_ n: Int) -> String { "\(n) attempt(s) remaining" }             // seed 004 L545 (shown when ≤ 3)
        static let invalidPassword = "Invalid password. Please try again."                  // seed 004 L1167
    }

    // MARK: Seed 002 — the IDV step screens (also used by seeds 000, 001, 003, 004)

    /// `IDVDocumentProcessStartConfirmationViewController` (seed 002 L1586–L1786).
    enum DocumentStart {
        static let title = "Scan your identity document"                                     // ours (titleLabel, storyboard text)
        static let scan = "Scan Document"                                                    // seed 002 L1733
        static let busy = "Starting Scan..."                                                 // seed 002 L1728
        static let startFailed = "Failed to start document scan"                             // seed 002 L1761
        static let cancelFailed = "Failed to cancel document scan"                           // seed 002 L1783
        /// The workflow guideline (seed 002 L1694–L1711).
        static func guideline(_ wf: RDNAIDVWorkflow) -> String {
            switch wf {
            case .activation: return "Activation process requires clear document scan. Ensure good lighting and hold your document steady."           // L1695
            case .activationWithTemplate: return "Activation with biometric template. Position document within frame for verification."               // L1697
            case .additionalDeviceWithTemplate: return "Additional device activation requires clear document scan. Position document within frame."  // L1699
            case .additionalDeviceWithoutTemplate: return "Additional device setup. Scan your identity document clearly for verification."          // L1701
            case .accountRecoveryWithTemplate: return "Account recovery process. Scan your identity document clearly for verification."             // L1703
            case .accountRecoveryWithoutTemplate: return "Account recovery requires document verification. Ensure all text is visible and document is flat."   // L1705
            case .postLoginKYC: return "KYC verification process. Hold document steady and avoid glare for best results."                          // L1707
            case .postLoginAgentKYC: return "Agent-assisted KYC process. Scan customer document clearly with proper lighting."                      // L1709
            default: return "Ensure you have good lighting and hold your document steady for the verification process."                            // L1711
            }
        }
    }

    /// `IDVConfirmDocumentDetailsViewController` (seed 002 L1858–L2209; seed 000 L1212–L1278).
    enum DocumentDetails {
        static let title = "Confirm Document Details"                                        // ours (titleLabel, storyboard text)
        static let rows: [(key: String, label: String)] = [
            ("document_type", "Document Type"),                                              // seed 002 L2024
            ("document_number", "Document Number"),                                          // seed 002 L2025
            ("date_of_birth", "Date of Birth"),                                              // seed 002 L2026
            ("expiry_date", "Expiry Date"),                                                  // seed 002 L2027
            ("issuing_country", "Issuing Country"),                                          // seed 002 L2028
        ]
        static let notAvailable = "N/A"                                                      // seed 002 L2024
        static let confirm = "Confirm"                                                       // seed 000 L1821
        static let recapture = "Recapture"                                                   // seed 000 L1821
        static let confirmFailed = "Failed to confirm document details"                     // seed 002 L2134
        static let recaptureFailed = "Failed to request recapture"                           // seed 002 L2156
        static let cancelFailed = "Failed to cancel"                                         // seed 000 L1262
    }

    /// `IDVSelfieProcessStartConfirmationViewController` (seed 002 L2211–L2527).
    enum SelfieStart {
        static let title = "Take a selfie"                                                   // ours (titleLabel, storyboard text)
        static let capture = "Capture Selfie"                                                // seed 002 L2470
        static let busy = "Starting Capture..."                                              // seed 002 L2464
        static let backCamera = "Use back camera"                                            // ours (cameraLabel, storyboard text)
        static let startFailed = "Failed to start selfie capture"                            // seed 002 L2501
        static let cancelFailed = "Failed to cancel selfie capture"                          // seed 002 L2524
        static let challengeTitle = "During the capture you will be asked to:"               // ours (active liveness, not in the codelabs)
        /// The three guidelines per workflow (seed 002 L2375–L2447), each shown with "• ".
        static func guidelines(_ wf: RDNAIDVWorkflow) -> [String] {
            switch wf {
            case .activation: return ["Ensure good lighting and position your face clearly in the frame for IDV activation process.",   // L2378
                                      "Remove any sunglasses, hats, or face coverings for clear facial recognition.",
                                      "Look directly at the camera and follow any on-screen prompts during capture."]
            case .activationWithTemplate: return ["Position your face clearly for IDV activation with template verification.",        // L2384
                                                  "Ensure your face matches the document photo for identity verification.",
                                                  "Maintain steady position and good lighting throughout the capture process."]
            case .additionalDeviceWithTemplate: return ["Additional device activation requires clear selfie capture for verification.", // L2390
                                                        "Position your face within the frame and ensure good lighting conditions.",
                                                        "Face will be matched with your existing biometric template for verification."]
            case .additionalDeviceWithoutTemplate: return ["Additional device without template requires new biometric enrollment.",    // L2396
                                                           "Position your face clearly for initial biometric template creation.",
                                                           "Follow capture guidelines for successful template generation."]
            case .accountRecoveryWithTemplate: return ["Account recovery with template - verify your identity using existing biometric data.",   // L2402
                                                       "Position your face clearly for comparison with stored template.",
                                                       "Ensure good lighting and stable positioning for successful verification."]
            case .accountRecoveryWithoutTemplate: return ["Account recovery without template - create new biometric profile.",        // L2408
                                                          "Position your face clearly for new biometric template creation.",
                                                          "Follow capture instructions for successful profile establishment."]
            case .postLoginKYC: return ["Post-login KYC process - capture selfie for identity verification.",                          // L2414
                                        "Ensure your face is clearly visible and well-lit for verification.",
                                        "Face will be compared with document photo for identity confirmation."]
            case .postLoginSelfieBiometric: return ["Post-login selfie biometric - capture selfie for biometric authentication.",      // L2420
                                                    "Position your face clearly for biometric template verification.",
                                                    "Ensure stable positioning and good lighting for accurate capture."]
            case .stepUpAuthentication: return ["Step-up authentication - additional verification through selfie capture.",          // L2426
                                                "Position your face clearly for enhanced security verification.",
                                                "Face will be verified against your existing biometric profile."]
            case .postLoginOptIn: return ["Biometric opt-in process - capture selfie for biometric enrollment.",                      // L2432
                                          "Position your face clearly for initial biometric template creation.",
                                          "This will enable biometric authentication for future logins."]
            case .postLoginAgentKYC: return ["Agent KYC process - capture customer selfie for identity verification.",                // L2438
                                             "Ensure customer face is clearly visible and well-positioned.",
                                             "Face will be compared with document photo for customer verification."]
            default: return ["Ensure good lighting and position your face clearly in the frame.",                                     // L2444
                             "Remove any sunglasses, hats, or face coverings for clear facial recognition.",
                             "Look directly at the camera and follow any on-screen prompts during capture."]
            }
        }
    }

    /// `IDVSelfieConfirmationViewController` (seed 002 L2558–L3273).
    enum SelfieConfirmation {
        static let title = "Selfie Confirmation"                                             // ours (titleLabel, storyboard text)
        static let matched = "✓ Selfie matches with document image"                          // seed 002 L2916–L2920
        static let notMatched = "✗ Selfie does not match with document image"                // seed 002 L2916–L2921
        static func status(_ displayText: String) -> String { "Status: \(displayText)" }     // seed 002 L2929
        static let faceMatch = "Face Match"                                                  // seed 002 L2934 (the row's label is storyboard text)
        static let liveness = "Liveness"                                                     // seed 002 L2944 (idem)
        static let criteria = "Criteria"                                                     // seed 002 L2956 (idem)
        static let busy = "Processing..."                                                    // seed 002 L3201
        static let confirmFailed = "Failed to confirm selfie"                                // seed 000 L1422
        static let cancelFailed = "Failed to cancel IDV flow"                                // seed 002 L3270
        /// Seed 000 L1413's one button (mode 9 sends "true").
        static let kycContinue = "Continue"                                                  // seed 000 L1835
    }

    /// `IDVBiometricOptInConsentViewController` (seed 002 L3321–L3595).
    enum Consent {
        static let title = "Biometric Consent"                                               // seed 000 L920 (the step's name; the title is storyboard text)
        static func description(_ mode: RDNAChallengeOpMode) -> String {
            mode.rawValue == 10
                ? "Your biometric template will be used for enhanced security verification. This allows for faster and more secure authentication in future sessions."   // seed 002 L3496
                : "Your selfie biometric template will be securely stored for identity verification. This enables faster authentication and enhanced security for your account."   // seed 002 L3498
        }
        static let bullets = ["• Your biometric data will be encrypted and stored securely",   // seed 002 L3478
                              "• This enables faster authentication for future sessions",      // seed 002 L3479
                              "• You can manage your consent preferences at any time",         // seed 002 L3480
                              "• Rejecting will not affect your current authentication"]       // seed 002 L3481
        static let approve = "Approve"                                                       // seed 002 L3523
        static let reject = "Reject"                                                         // seed 002 L3522
        static let busy = "Processing..."                                                    // seed 002 L3515
        static let failed = "Failed to process consent"                                      // seed 002 L3551
    }

    /// The captured-frame modal (seed 004 L1268–L1308, L1383).
    enum FrameConfirmation {
        static let title = "Captured Frame Confirmation"                                     // seed 004 L1383
        static let approve = "Approve"                                                       // seed 004 L2113
        static let recapture = "Recapture"                                                   // seed 004 L2149
        static let cancel = "Cancel"                                                         // seed 004 L2160
    }

    // MARK: MFA screens (earlier codelabs; ours)

    enum MFA {
        static let checkUser = "Who are you?"
        static let activationCode = "Enter the activation code you received"
        static let setPassword = "Choose a password (8+ characters, a letter and a digit)"
        static let verifyPassword = "Enter your password"
        static let ldaConsent = "Use device authentication (LDA) from now on?"
        static let loggedIn = "Welcome"
        static let loggedOff = "Logged off"
    }
}
