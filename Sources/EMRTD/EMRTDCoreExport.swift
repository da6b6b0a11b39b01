// BER-TLV, SecurityInfos and domain parameters live in EMRTDCore (pure Swift, shared with the client's chip
// access); `import EMRTD` brings them too.
@_exported import EMRTDCore
