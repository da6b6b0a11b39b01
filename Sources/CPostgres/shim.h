#include <libpq-fe.h>

/* PG_DIAG_* are character-literal macros, which Swift does not import. */
static inline const char *cpg_sqlstate(const PGresult *res) { return PQresultErrorField(res, PG_DIAG_SQLSTATE); }
static inline const char *cpg_primary_message(const PGresult *res) { return PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY); }
static inline const char *cpg_constraint(const PGresult *res) { return PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME); }
