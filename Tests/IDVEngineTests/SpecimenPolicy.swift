import IDVEngine

extension WorkflowPolicy {
    /// The default policy with ICAO specimen documents (UTO) accepted, as the tests' specimen pages
    /// and chips need; the default refuses them (`idv.doc.accept_specimen_documents`, #38).
    static var acceptingSpecimens: WorkflowPolicy {
        var p = WorkflowPolicy()
        p.acceptSpecimenDocuments = true
        return p
    }
}
