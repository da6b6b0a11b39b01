// protocol.js — the wire vocabulary the page speaks: the same routes, challenge and event names
// as IDVKit (Sources/IDVCore/Wire.swift, docs/PROTOCOL.md, docs/WORKFLOWS.md). A Swift test keeps
// these names equal to IDVCore's.

export const Route = {
  sessions: '/v1/sessions',
  session: '/v1/session',
  answer: '/v1/session/answer',
  upload: '/v1/session/upload',
  reset: '/v1/session/reset',
  logoff: '/v1/session/logoff',
  flows: '/v1/flows/',
  redeemLink: '/v1/links/redeem',
};

export const Challenge = {
  getUser: 'getUser',
  getActivationCode: 'getActivationCode',
  getPassword: 'getPassword',
  getUserConsentForLDA: 'getUserConsentForLDA',
  getDeviceSignature: 'getDeviceSignature',
  getIDVDocumentScanProcessStartConfirmation: 'getIDVDocumentScanProcessStartConfirmation',
  uploadIDVDocumentPages: 'uploadIDVDocumentPages',
  readIDVDocumentChip: 'readIDVDocumentChip',
  getIDVConfirmDocumentDetails: 'getIDVConfirmDocumentDetails',
  getIDVSelfieProcessStartConfirmation: 'getIDVSelfieProcessStartConfirmation',
  uploadIDVSelfieFrames: 'uploadIDVSelfieFrames',
  getIDVSelfieConfirmation: 'getIDVSelfieConfirmation',
  getIDVBiometricOptInConsent: 'getIDVBiometricOptInConsent',
  onIDVOptInCapturedFrameConfirmation: 'onIDVOptInCapturedFrameConfirmation',
};

export const Event = {
  onUserLoggedIn: 'onUserLoggedIn',
  onUserLoggedOff: 'onUserLoggedOff',
  onAuthStateReset: 'onAuthStateReset',
  onIDVActivatedCustomerKYCResponse: 'onIDVActivatedCustomerKYCResponse',
  onIDVAdditionalDocumentScan: 'onIDVAdditionalDocumentScan',
  onIDVCheckUserBiometricTemplateStatus: 'onIDVCheckUserBiometricTemplateStatus',
  onIDVServerBiometricAuthenticationResult: 'onIDVServerBiometricAuthenticationResult',
  onIDVBiometricOptInStatus: 'onIDVBiometricOptInStatus',
  onIDVBiometricOptOutStatus: 'onIDVBiometricOptOutStatus',
};

// Image-carrying answers go to the upload route (megabytes); every other answer to /answer.
export const uploadChallenges = new Set([Challenge.uploadIDVDocumentPages, Challenge.uploadIDVSelfieFrames, Challenge.readIDVDocumentChip]);

// Presence by illumination (IDVCore PresencePayloads.swift): the keys of payload.presence, the
// answer's frame times, and the two ways of declining the flashing screen.
export const Presence = {
  key: 'presence', illumination: 'illumination', fallback: 'fallback', expiresAt: 'expires_at', frameTimes: 'frame_times_ms',
  unavailable: 'unavailable', declined: 'declined',
};

// RDNAChallengeOpMode raw values the page distinguishes.
export const Mode = { verify: 0, set: 1, optIn: 6, optOut: 7, activation: 8, kyc: 9, documentScan: 10, serverBiometric: 25 };

// RDNAIDVStatus (seed 004): the answer to onIDVOptInCapturedFrameConfirmation.
export const FrameStatus = { approved: 0, recapture: 1, cancel: 2 };

// Selfie-confirmation action keys (server-offered, seed 002 §6.3).
export const ActionKey = { continueFlow: 'continue-flow', reinitSelfie: 'reinit-idv-selfie', reinitDocument: 'reinit-idv-document-scan' };

export const Flow = {
  activation: 'idv.activation',
  kyc: 'idv.postlogin.kyc',
  documentScan: 'idv.postlogin.document_scan',
  serverBiometric: 'idv.postlogin.server_biometric',
  templateStatus: 'idv.template_status',
  optIn: 'idv.postlogin.optin',
  optOut: 'idv.postlogin.optout',
};

// Error codes the page acts on (IDVCore Codes.swift).
export const Code = {
  none: 0, idvCancelledByUser: 146, userCancelled: 240, malformedRequest: 1001, wrongChallenge: 1002, sessionExpired: 1003,
  unauthenticated: 1004, replayedAnswer: 1005, attemptsExhausted: 1010, flowInProgress: 1022, linkInvalid: 1040, presenceRequired: 1070,
};

// The seeds' dual validation: success is error 0 and status 100 (or 0).
export function isSuccess(error, status) {
  return (error?.long_error_code ?? 0) === 0 && [0, 100].includes(status?.status_code ?? 100);
}
