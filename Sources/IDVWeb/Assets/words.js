// words.js — every sentence the page shows, in one table (the terminal app's twin is
// Sources/idv/Words.swift). Where a codelab gives the words they are its exact strings, with the
// seed file and line beside each (`// seed 000 L911` = ../shared/seeds/000_*.txt line 911; a
// comment naming only a seed and a line is checked against that line by CodelabWordsTests); the
// rest is plain language of ours. Screens look words up here; nothing else in the page writes
// sentences for people.

export const W = {
  appTitle: 'Identity verification',
  processing: 'Processing...',
  close: 'Close',
  cancel: 'Cancel',
  tryAgain: 'Try again',
  attemptsLeft: (n) => (n < 0 ? '' : n === 1 ? '1 attempt left' : `${n} attempts left`),
  loading: 'Loading…',

  // MFA screens
  checkUser: {
    title: 'Sign in',
    subtitle: 'Enter your user ID to continue.',
    label: 'User ID',
    button: 'Continue',
  },
  activationCode: {
    title: 'Enter the activation code you received',
    subtitle: (user) => `Activating ${user}. The code looks like XXXXX-XXXXX.`,
    label: 'Activation code',
    button: 'Continue',
  },
  setPassword: {
    title: 'Choose a password',
    subtitle: 'At least 8 characters, with at least one letter and one digit, and not your user ID.',
    label: 'New password',
    confirmLabel: 'Repeat the password',
    mismatch: 'The two passwords are not the same.',
    button: 'Set password',
  },
  verifyPassword: {
    title: 'Enter your password',
    subtitle: (user) => `Signing in as ${user}.`,
    label: 'Password',
    button: 'Sign in',
  },
  // Seed 004 §6.4: the password dialog of opt-in / opt-out (PasswordValidationDialogViewController).
  reauth: {
    6: {
      title: '🔐 Biometric Opt-In Authentication', // seed 004 L1187
      subtitle: 'Please verify your password to create biometric template', // seed 004 L1188
    },
    7: {
      title: '🔐 Biometric Opt-Out Authentication', // seed 004 L1569
      subtitle: 'Please verify your password to delete biometric template', // seed 004 L1570
    },
    fallback: {
      title: '🔐 Authentication Required', // seed 004 L410
      subtitle: 'Please verify your password to continue', // seed 004 L413
    },
    label: 'Password',
    placeholder: 'Enter your password', // seed 004 L496
    button: 'Verify & Continue', // seed 004 L569
    attempts: (n) => `${n} attempt(s) remaining`, // seed 004 L545 (shown when 3 or fewer)
    invalid: 'Invalid password. Please try again.', // seed 004 L1167
  },

  // Seed 002 §8.1 / seed 000 §6.3
  documentStart: {
    title: 'Scan your identity document',
    subtitle: 'We will take a photo of your passport or ID card with your camera.',
    guidelinesTitle: 'Before you start',
    guidelines: [
      'Use the page with your photo and the two lines of letters and <<< at the bottom.',
      'Put the document on a flat, dark surface and fit the whole page inside the frame.',
      'Avoid glare and shadows; hold the phone steady.',
    ],
    button: 'Scan Document', // seed 002 L1733
    buttonBusy: 'Starting Scan...', // seed 002 L1728
    retryTitle: 'Let’s try the document again',
  },
  // Seed 002 L1694–L1711: the workflow guideline of the document start screen.
  workflowGuideline: {
    0: 'Activation process requires clear document scan. Ensure good lighting and hold your document steady.', // seed 002 L1695
    1: 'Activation with biometric template. Position document within frame for verification.', // seed 002 L1697
    2: 'Additional device activation requires clear document scan. Position document within frame.', // seed 002 L1699
    3: 'Additional device setup. Scan your identity document clearly for verification.', // seed 002 L1701
    4: 'Account recovery process. Scan your identity document clearly for verification.', // seed 002 L1703
    5: 'Account recovery requires document verification. Ensure all text is visible and document is flat.', // seed 002 L1705
    6: 'KYC verification process. Hold document steady and avoid glare for best results.', // seed 002 L1707
    13: 'Agent-assisted KYC process. Scan customer document clearly with proper lighting.', // seed 002 L1709
    default: 'Ensure you have good lighting and hold your document steady for the verification process.', // seed 002 L1711
  },
  documentCapture: {
    title: (page) => (page === 0 ? 'Front of the document' : 'Back of the document'),
    subtitle: 'Fit the page inside the frame.',
    capture: 'Take photo',
    retake: 'Retake',
    usePhoto: 'Use this photo',
    sendPages: (n) => (n === 1 ? 'Send 1 page' : `Send ${n} pages`),
    addPage: 'Add the back page',
    reviewTitle: 'Check the photo',
    reviewSubtitle: 'Is all the text sharp and readable, with no glare?',
    starting: 'Starting the camera…',
    uploading: 'Reading your document…',
    videoLabel: 'Camera preview of your document',
    shotAlt: (page) => (page === 0 ? 'Photo of the front of the document' : 'Photo of the back of the document'),
  },
  hint: {
    good: 'Looks good — hold steady and take the photo.',
    dark: 'It’s too dark. Move somewhere brighter or turn on a light.',
    glare: 'There’s glare on the document. Tilt it away from the light.',
    blurry: 'The picture is blurry. Hold still and let the camera focus.',
    waiting: 'Checking the picture…',
  },

  // Seed 002 §8.2 (IDVConfirmDocumentDetailsViewController), seed 000 §6.4
  documentConfirm: {
    title: 'Confirm Document Details',
    subtitle: 'Check that these details are yours and were read correctly.',
    rows: [
      ['document_type', 'Document Type'], // seed 002 L2024
      ['document_number', 'Document Number'], // seed 002 L2025
      ['date_of_birth', 'Date of Birth'], // seed 002 L2026
      ['expiry_date', 'Expiry Date'], // seed 002 L2027
      ['issuing_country', 'Issuing Country'], // seed 002 L2028
      ['nationality', 'Nationality'],
      ['sex', 'Sex'],
    ],
    notAvailable: 'N/A', // seed 002 L2024
    portraitAlt: 'Portrait from the document',
    frontAlt: 'Front page of the document',
    backAlt: 'Back page of the document',
    checksTitle: 'Checks',
    errorsTitle: 'Problems',
    warningsTitle: 'Warnings',
    statusLabel: 'Overall status',
    status: { VALID: 'Valid', INVALID: 'Not valid', WARNING: 'Valid, with warnings' },
    invalidNote: 'This document cannot be accepted. Scan a valid document.',
    confirm: 'Confirm', // seed 000 L1821 ('Tap "Confirm" to proceed')
    recapture: 'Recapture', // seed 000 L1821 ('(or "Recapture" to rescan)')
  },
  checkResult: { PASSED: 'Passed', FAILED: 'Failed', NOT_PERFORMED: 'Not performed', WARNING: 'Warning' },
  checkName: {
    mrz_check_digit_document_number: 'Document number check digit',
    mrz_check_digit_date_of_birth: 'Date of birth check digit',
    mrz_check_digit_expiry_date: 'Expiry date check digit',
    mrz_check_digit_optional_data: 'Personal number check digit',
    mrz_check_digit_composite: 'Composite check digit',
    document_not_expired: 'Document not expired',
    portrait_present: 'Portrait found',
    mrz_format: 'Machine-readable zone format',
  },

  // Seed 002 §8.3 (guidelines per workflow)
  selfieStart: {
    title: 'Take a selfie',
    subtitle: 'We will record a short video of your face to check it is really you.',
    guidelinesTitle: 'Guidelines',
    backCamera: 'Use the back camera',
    button: 'Capture Selfie', // seed 002 L2470
    buttonBusy: 'Starting Capture...', // seed 002 L2464
    retryTitle: 'Let’s try the selfie again',
    challengeTitle: 'During the capture you will be asked to:',
  },
  // Seed 002 L2375–L2447: three guidelines for each of eleven workflows, and the default (the
  // first line of each set is on the seed line noted; the next two follow it).
  selfieGuidelines: {
    0: ['Ensure good lighting and position your face clearly in the frame for IDV activation process.', // seed 002 L2378
      'Remove any sunglasses, hats, or face coverings for clear facial recognition.',
      'Look directly at the camera and follow any on-screen prompts during capture.'],
    1: ['Position your face clearly for IDV activation with template verification.', // seed 002 L2384
      'Ensure your face matches the document photo for identity verification.',
      'Maintain steady position and good lighting throughout the capture process.'],
    2: ['Additional device activation requires clear selfie capture for verification.', // seed 002 L2390
      'Position your face within the frame and ensure good lighting conditions.',
      'Face will be matched with your existing biometric template for verification.'],
    3: ['Additional device without template requires new biometric enrollment.', // seed 002 L2396
      'Position your face clearly for initial biometric template creation.',
      'Follow capture guidelines for successful template generation.'],
    4: ['Account recovery with template - verify your identity using existing biometric data.', // seed 002 L2402
      'Position your face clearly for comparison with stored template.',
      'Ensure good lighting and stable positioning for successful verification.'],
    5: ['Account recovery without template - create new biometric profile.', // seed 002 L2408
      'Position your face clearly for new biometric template creation.',
      'Follow capture instructions for successful profile establishment.'],
    6: ['Post-login KYC process - capture selfie for identity verification.', // seed 002 L2414
      'Ensure your face is clearly visible and well-lit for verification.',
      'Face will be compared with document photo for identity confirmation.'],
    8: ['Post-login selfie biometric - capture selfie for biometric authentication.', // seed 002 L2420
      'Position your face clearly for biometric template verification.',
      'Ensure stable positioning and good lighting for accurate capture.'],
    9: ['Step-up authentication - additional verification through selfie capture.', // seed 002 L2426
      'Position your face clearly for enhanced security verification.',
      'Face will be verified against your existing biometric profile.'],
    10: ['Biometric opt-in process - capture selfie for biometric enrollment.', // seed 002 L2432
      'Position your face clearly for initial biometric template creation.',
      'This will enable biometric authentication for future logins.'],
    13: ['Agent KYC process - capture customer selfie for identity verification.', // seed 002 L2438
      'Ensure customer face is clearly visible and well-positioned.',
      'Face will be compared with document photo for customer verification.'],
    default: ['Ensure good lighting and position your face clearly in the frame.', // seed 002 L2444
      'Remove any sunglasses, hats, or face coverings for clear facial recognition.',
      'Look directly at the camera and follow any on-screen prompts during capture.'],
  },
  selfieCapture: {
    title: 'Selfie',
    subtitle: 'Put your face inside the oval.',
    start: 'Start',
    ready: 'Press Start when you are ready.',
    videoLabel: 'Camera preview of your face',
    getReady: 'Get ready…',
    passive: 'Look at the camera and blink naturally.',
    keepStill: 'Keep your face in the oval…',
    done: 'Done — checking…',
    uploading: 'Checking your selfie…',
    progress: 'Recording',
  },
  // Active liveness actions (FaceKit ChallengeAction; the subject's own left/right).
  action: {
    TURN_LEFT: 'Turn your head to your left',
    TURN_RIGHT: 'Turn your head to your right',
    BLINK: 'Blink',
    OPEN_MOUTH: 'Open your mouth',
  },
  actionList: (names) => names.join(', then '),

  // Seed 002 §8.4 (IDVSelfieConfirmationViewController)
  selfieConfirm: {
    title: 'Selfie result',
    matched: 'Selfie matches with document image', // seed 002 L2920
    notMatched: 'Selfie does not match with document image', // seed 002 L2921
    livenessFailed: 'We could not confirm that a live person took this selfie',
    status: (t) => `Status: ${t}`, // seed 002 L2929
    faceMatch: 'Face match',
    liveness: 'Liveness',
    criteria: 'Criteria',
    documentPhotoAlt: 'Photo from your document',
    selfieAlt: 'Your selfie',
    noImage: 'No image',
    fallbackButtons: [['Recapture Selfie', 'reinit-idv-selfie'], ['Continue', 'continue-flow']],
  },
  // Seed 004 §6.5 (the Captured Frame Confirmation modal)
  optInFrame: {
    title: 'Use this photo?',
    subtitle: 'This frame will be used to create your biometric template.',
    alt: 'The captured frame',
    liveness: 'Liveness',
    approve: 'Approve', // seed 004 L1383 (Approve / Recapture / Cancel)
    recapture: 'Recapture', // seed 004 L1383
    cancel: 'Cancel', // seed 004 L1383
  },
  // Seed 002 §8.5 (IDVBiometricOptInConsentViewController)
  consent: {
    title: 'Biometric consent',
    description10: 'Your biometric template will be used for enhanced security verification. This allows for faster and more secure authentication in future sessions.', // seed 002 L3496
    description: 'Your selfie biometric template will be securely stored for identity verification. This enables faster authentication and enhanced security for your account.', // seed 002 L3498
    bullets: [
      'Your biometric data will be encrypted and stored securely', // seed 002 L3478
      'This enables faster authentication for future sessions', // seed 002 L3479
      'You can manage your consent preferences at any time', // seed 002 L3480
      'Rejecting will not affect your current authentication', // seed 002 L3481
    ],
    approve: 'Approve', // seed 002 L3523
    reject: 'Reject', // seed 002 L3522
  },

  // Post-login menu (the side menus of seeds 000, 001, 003, 004): each item opens its entry screen.
  home: {
    title: (user) => `Signed in as ${user}`,
    subtitle: 'What would you like to do?',
    flows: [
      ['kyc', 'Activated Customer KYC', 'Verify your identity with your document and a selfie.'], // seed 000 L736 (the title)
      ['document-scan', 'Additional Document Scan', 'Add another identity document.'],
      ['server-biometric', '🔐 Biometric Authentication', 'Prove it is you with a selfie.'], // seed 001 L1097 (the title)
      ['optin', '✅ Biometric Opt-In', 'Store a biometric template for future logins.'], // seed 004 L1714 (icon and title)
      ['optout', '❌ Biometric Opt-Out', 'Delete your biometric template.'], // seed 004 L1715 (icon and title)
      ['template-status', 'Biometric Template Status', 'See whether a biometric template is stored.'],
    ],
    logoff: 'Log off',
  },
  flowReason: {
    'idv.postlogin.kyc': 'Post Login KYC', // seed 000 L1021
    'idv.postlogin.document_scan': 'Additional Document Verification', // seed 003 L742
    'idv.postlogin.server_biometric': 'Server Biometric Authentication', // seed 001 L858
  },

  // The entry screens the codelabs start their flows from.
  entry: {
    back: 'Back',
    // Seed 000 §6.2: ActivatedCustomerKYCViewController (L911–L925, L1056–L1080).
    kyc: {
      title: 'Activated Customer KYC', // seed 000 L911
      subtitle: 'Complete your identity verification', // seed 000 L912
      infoTitle: 'What is KYC?', // seed 000 L914
      infoText: 'KYC (Know Your Customer) is a verification process to confirm your identity. This helps ensure the security of your account and complies with regulatory requirements.', // seed 000 L915
      steps: [
        '1. Document Scan', // seed 000 L917
        '2. Confirm Document Details', // seed 000 L918
        '3. Selfie Capture', // seed 000 L919
        '4. Biometric Consent', // seed 000 L920
      ],
      requirements: [
        '• Have a valid government-issued ID ready', // seed 000 L922
        '• Ensure good lighting for document scanning', // seed 000 L923
        '• Position your face clearly for selfie capture', // seed 000 L924
        '• Allow camera permissions when prompted', // seed 000 L925
      ],
      start: 'Start KYC Verification', // seed 000 L1064
      busy: 'Initiating...', // seed 000 L1060
      initiateFailed: 'Failed to initiate KYC verification', // seed 000 L1031
    },
    // Seed 003 §6.2: AdditionalDocumentScanViewController (its title, subtitle and info texts are
    // storyboard text the codelab does not show: ours).
    documentScan: {
      title: 'Additional Document Scan',
      subtitle: 'Scan another identity document to add it to your verified profile.',
      info: ['Use a passport or an ID card with the machine-readable lines (<<<) on it.', 'You can scan as many documents as you need, one at a time.'],
      start: 'Start Additional Document Scan', // seed 003 L770
      busy: 'Starting...', // seed 003 L766
    },
    // Seed 001 §8.2: ServerBiometricAuthenticationViewController.
    serverBiometric: {
      title: 'Biometric Authentication',
      subtitle: 'Verify your identity against your stored biometric template.',
      checking: 'Checking Template Status...', // seed 001 L1006
      busy: 'Authenticating...', // seed 001 L1011
      start: 'Start Authentication', // seed 001 L1016
      disabledNote: 'Please complete biometric opt-in first', // seed 001 L1140 (help text)
    },
    // Seed 004 §6.2 / §6.3: BiometricOptInViewController / BiometricOptOutViewController.
    optIn: {
      title: 'Biometric Opt-In',
      subtitle: 'Create a biometric template for faster, more secure authentication.',
      checking: 'Checking Status...', // seed 004 L1660 (opt-out's title; opt-in's by symmetry)
      busy: 'Processing...', // seed 004 L1663 (idem)
      start: 'Start Opt-In', // seed 004 L1876 (the button the tests tap)
      disabledNote: 'A biometric template already exists. Opt out first to create a new one.',
    },
    optOut: {
      title: 'Biometric Opt-Out',
      subtitle: 'Delete your biometric template from the server.',
      checking: 'Checking Status...', // seed 004 L1660
      busy: 'Processing...', // seed 004 L1663
      start: 'Start Opt-Out', // seed 004 L1666
      disabledNote: 'No biometric template found. There is nothing to opt out of.',
    },
  },
  // The template status card (seed 001 L826–L846; seed 004's status section shows the same status).
  templateCard: {
    existsTitle: '✅ Biometric Template Status', // seed 001 L836
    exists: 'Your biometric template is stored on the server. You can proceed with authentication.', // seed 001 L837
    noneTitle: '⚠️ Biometric Template Status', // seed 001 L840
    none: 'No biometric template found on the server. Please complete biometric opt-in first.', // seed 001 L841
    code: (message, code) => `Status: ${message} (Code: ${code})`, // seed 001 L845
    error: (e) => `Error: ${e}`, // seed 001 L803
    templateExists: 'Template exists', // seed 004 L2043 (the tests' wording)
    noTemplate: 'No template', // seed 004 L2041 (idem)
  },

  // Results: the codelabs' alerts and seed 003's result screen.
  result: {
    done: 'Done',
    home: 'Back to Dashboard',
    ok: 'OK', // seed 003 L817
    closeNow: 'You can close this page now.',
    reference: (id) => `Reference: ${id}`,
    activated: { title: 'You are all set', message: 'Your account is activated and you are signed in.' },
    loggedIn: { title: 'Signed in', message: 'You are signed in.' },
    // Seed 000 L963–L999: the KYC alert by the dual validation.
    kyc: {
      success: 'Success', // seed 000 L989 (isSuccess ? "Success" : "Error")
      failure: 'Error', // seed 000 L989 (idem)
      successMessage: 'KYC verification completed successfully! Your identity has been verified.', // seed 000 L981
      failed: (why) => `KYC verification failed: ${why}`, // seed 000 L973, L977
      unknownError: 'Unknown error', // seed 000 L973 (errorString ?? "Unknown error")
      serverError: 'Server error', // seed 000 L977 (statusMessage ?? "Server error")
      button: 'Go to Dashboard', // seed 000 L994
    },
    // Seed 003: the error alert (L684–L709) and the result screen (L960–L1445).
    docScan: {
      title: 'Document Scan Result',
      errorTitle: 'Error', // seed 003 L689
      scanFailed: 'Failed to scan document', // seed 003 L690
      serverFailed: 'Document scan failed', // seed 003 L707
      startFailed: 'Failed to start document scan', // seed 003 L755
      status: 'Document status',
      errorHint: 'Document validation failed. Please review details below.', // seed 003 L1129
      warningHint: 'Document has warnings. Review details below.', // seed 003 L1132
      category: (c) => `Category: ${c}`, // seed 003 L1400
      isNFCDocument: 'Is NFC Document', // seed 003 L1274
      yes: 'Yes', // seed 003 L1274 (isNFCDocument ? "Yes" : "No")
      no: 'No', // seed 003 L1274 (idem)
      nfcScanStatus: 'NFC Scan Status', // seed 003 L1279
      reason: 'Reason', // seed 003 L1284
      done: 'Done', // seed 003 L886 ("Done" button)
      errorsTitle: 'Errors',
      warningsTitle: 'Warnings',
      identityTitle: 'Identity data',
      nfcTitle: 'NFC',
    },
    templateStatus: { title: 'Biometric Template Status' },
    // Seed 001 L915–L996: the four alerts of server biometric authentication.
    serverBiometric: {
      errorTitle: 'Authentication Error', // seed 001 L922
      errorMessage: (text, code) => [text, `Error Code: ${code}`], // seed 001 L923 ("\(errorString)\n\nError Code: \(code)")
      failedTitle: 'Authentication Failed', // seed 001 L932
      statusMessage: (message, code) => [`Status: ${message}`, `Status Code: ${code}`], // seed 001 L933
      completeTitle: 'Authentication Complete', // seed 001 L951
      complete: 'Authentication completed successfully', // seed 001 L952
      successTitle: '✅ Authentication Success', // seed 001 L972
      failureTitle: '❌ Authentication Failed', // seed 001 L988
      body: (result, useCase, txn, left) => [`Biometric Result: ${result}`, `Use Case: ${useCase}`, `Transaction ID: ${txn}`, `Attempts Left: ${left}`], // seed 001 L973–L978
      unknown: 'Unknown', // seed 001 L959
      notAvailable: 'N/A', // seed 001 L963
      backToDashboard: 'Back to Dashboard', // seed 001 L981
      explain: {
        NOT_MATCHED: 'Your selfie does not match your biometric template.',
        LIVENESS_FAILED: 'We could not confirm that a live person took this selfie. A photo or a screen held up to the camera is not accepted.',
      },
      initiateFailed: (e) => `Failed to initiate authentication: ${e}`, // seed 001 L869
      checkErrorTitle: 'Template Status Check Error', // seed 001 L783
      checkFailed: (e) => `Failed to check template status: ${e}`, // seed 001 L783
    },
    // Seed 004 L1330–L1348, L1630–L1650.
    optIn: {
      success: 'Success', // seed 004 L1337
      successMessage: 'Biometric template stored successfully! You can now use biometric authentication.', // seed 004 L1337
      failure: 'Opt-In Failed', // seed 004 L1343
      initiateFailed: (e) => `Failed to initiate opt-in: ${e}`, // seed 004 L1147
    },
    optOut: {
      success: 'Success', // seed 004 L1637
      successMessage: 'Biometric template deleted successfully! You have opted out from biometric authentication.', // seed 004 L1637
      none: 'No Template', // seed 004 L1642
      noneMessage: 'No biometric template found. You have already opted out or never opted in.', // seed 004 L1642
      failure: 'Opt-Out Failed', // seed 004 L1648
      initiateFailed: (e) => `Failed to initiate opt-out: ${e}`, // seed 004 L1529
    },
    errorTitle: 'Error', // seed 004 L1106
    checkFailed: (e) => `Failed to check template status: ${e}`, // seed 004 L1106
    cancelled: { title: 'Cancelled', message: 'You cancelled. Nothing was changed.' },
    linkInvalid: {
      title: 'This link can’t be used',
      advice: 'Verification links work once and only for a limited time. Ask whoever sent it to you for a new link.',
    },
    sessionEnded: 'Your session has ended. Please start again.',
    loggedOff: 'You are logged off.',
    unsupported: (name) => `This step (${name}) is not supported by this page.`,
  },

  // Presence by illumination (flash.js): the warning before the screen flashes, and its way out.
  presence: {
    warning: 'When you press Start, your screen will flash bright colours for about 3 seconds while the camera records. If flashing light can affect you (for example photosensitive epilepsy), choose “Use head movements instead”.',
    brightness: 'Turn your screen brightness all the way up and hold the phone about 30 cm (one foot) from your face.',
    decline: 'Use head movements instead',
    flashing: 'Keep looking at the screen…',
    fallback: 'This check uses head movements instead of the flashing screen. Follow the instructions below.',
  },

  // Camera problems (plain language)
  camera: {
    denied: 'Camera access is blocked. To continue, allow camera access for this site in your browser’s settings, then tap Try again.',
    notFound: 'We could not find a camera on this device. Open this page on a phone or computer with a camera.',
    inUse: 'Your camera is being used by another app. Close that app, then tap Try again.',
    insecure: 'The camera only works on a secure (https://) page. Ask for an https link.',
    unsupported: 'This browser cannot use the camera. Try a recent Chrome, Safari, Firefox or Edge.',
    failed: 'The camera could not start. Tap Try again.',
    dark: 'It’s too dark to see you. Move somewhere brighter.',
  },
  network: {
    offline: 'You seem to be offline. Check your connection; we will carry on where you left off.',
    server: 'The service is not answering right now. Please try again in a moment.',
    retrying: 'Trying again…',
    resumed: 'Connection back. Continuing where you left off.',
  },

  // Error codes (IDVCore Codes.swift) in plain words; the server's own sentence is shown beside
  // when it says more (e.g. which check failed).
  code: {
    146: 'Identity verification was cancelled.',
    240: 'You cancelled.',
    1003: 'Your session has expired. Please start again.',
    1004: 'Your session has ended. Please start again.',
    1008: 'We could not use that picture. Please take it again.',
    1009: 'The picture is too large. Please take it again.',
    1010: 'There are no attempts left for this step.',
    1011: 'This account is locked after too many attempts. Contact support to unlock it.',
    1012: 'That activation code is not right. Check it and try again.',
    1013: 'This activation code has expired, was already used, or is being used in another session.',
    1014: 'That password is not right.',
    1015: 'That password is not allowed: use at least 8 characters with a letter and a digit, and not your user ID.',
    1016: 'We do not know that user ID.',
    1017: 'No biometric template is stored for you. Complete biometric opt-in first.',
    1018: 'A biometric template is already stored for you.',
    1019: 'This verification took too long and has expired. Please start again.',
    1022: 'Another step is still in progress. Finish or cancel it first.',
    1023: 'Your device could not be verified; use your password.',
    1031: 'We could not read the document. Make sure the whole photo page is in the frame, flat, sharp and without glare — including the two lines of letters and <<< at the bottom.',
    1032: 'We could not see a face. Make sure your face is in the frame and well lit.',
    1033: 'Identity verification is not available right now. Please try again later.',
    1040: 'This verification link is not valid.',
    1066: 'We could not check the selfie well enough. Hold the phone at eye level in even light, keep your face in the frame, look at the camera, blink and turn your head a little, and take it again. This does not use up an attempt.',
    1070: 'This check needs your screen to flash colours while the front camera records. Use a phone or computer whose screen faces you.',
    1071: 'We could not see your screen\'s colours on your face clearly. Move away from bright light or a window, hold the phone a little closer, and take it again. This does not use up an attempt.',
    default: 'Something went wrong. Please try again.',
  },
  // An error code whose sentence depends on the ask it came back with: a 1066 whose upload request
  // carries a liveness_challenge is the capture sent on to an active challenge (the twin of IDVCore's
  // IDVErrorCode.selfieRetakeChallengeMessage, chosen by codeWords from the payload).
  codeWithChallenge: {
    1066: 'One more check: keep your face in the frame and follow the movements shown on the screen. This does not use up an attempt.',
  },
  // Status messages that are verdict keywords (WORKFLOWS.md §1), in plain words.
  statusWords: {
    LIVENESS_FAILED: 'We could not confirm that a live person took this selfie.',
    NOT_MATCHED: 'The selfie does not match.',
  },
  // FaceKit LivenessReason codes
  reason: {
    INSUFFICIENT_FRAMES: 'The recording was too short.',
    NO_FACE: 'We could not see your face.',
    FACE_LOST: 'Your face left the frame during the recording.',
    MULTIPLE_FACES: 'More than one face was in view.',
    IDENTITY_CHANGED: 'The person changed during the recording.',
    NO_BLINK: 'We did not see you blink.',
    RIGID_MOTION: 'The face moved like a photo, not like a person.',
    CHALLENGE_NOT_MET: 'The requested movements were not seen.',
    CHALLENGE_EXPIRED: 'The recording arrived too late.',
    ILLUMINATION_NOT_FOLLOWED: 'We could not see the screen’s light on your face. Turn the brightness up, hold the phone closer and avoid bright light behind or above you.',
    PRESENCE_EXPIRED: 'The recording arrived too late. Please take it again.',
    LOW_SCORE: 'We could not confirm a live person.',
  },
};

// Plain words for an error code (with the server's sentence when the table has none). `payload` is
// the payload of the challenge asked again, when there is one: a 1066 whose upload request carries a
// liveness_challenge reads W.codeWithChallenge (one more check under the movements shown), never the
// plain retake's sentence.
export function codeWords(code, serverText, payload) {
  const challenge = payload && payload.liveness_challenge;
  if (challenge && typeof challenge === 'object' && W.codeWithChallenge[code]) return W.codeWithChallenge[code];
  return W.code[code] ?? (serverText || W.code.default);
}
