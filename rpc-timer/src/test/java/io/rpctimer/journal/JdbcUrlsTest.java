package io.rpctimer.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** A JDBC URL is shown (logs, exceptions, the operators' view) with its secrets hidden. */
class JdbcUrlsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"
                    + "|jdbc:postgresql://db:5432/app?user=app&password=***&ssl=true",
            "jdbc:postgresql://db/app?sslpassword=s3cret|jdbc:postgresql://db/app?sslpassword=***",
            "jdbc:h2:file:/tmp/j;PASSWORD=s3cret;WRITE_DELAY=0|jdbc:h2:file:/tmp/j;PASSWORD=***;WRITE_DELAY=0",
            "jdbc:mysql://app:s3cret@db:3306/app|jdbc:mysql://app:***@db:3306/app",
            "jdbc:mariadb://db/app?user=app&pwd=s3cret|jdbc:mariadb://db/app?user=app&pwd=***",
            "jdbc:h2:mem:x;DB_CLOSE_DELAY=-1|jdbc:h2:mem:x;DB_CLOSE_DELAY=-1",
    })
    void redactHidesEverySecret(String url, String shown) {
        assertEquals(shown, JdbcUrls.redact(url));
        assertEquals(!url.equals(shown), JdbcUrls.hasSecret(url));
    }

    @Test
    void theJournalNeverShowsThePasswordOfItsUrl() throws Exception {
        String url = "jdbc:h2:mem:creds-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;PASSWORD=s3cret";
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL(url);
        h2.setUser("sa");
        JdbcRetryJournal j = JdbcRetryJournal.builder(h2).name(url).lease(java.time.Duration.ZERO).build();
        try {
            assertFalse(j.describe().contains("s3cret"), j.describe());
            assertTrue(j.describe().contains("PASSWORD=***"), j.describe());
        } finally {
            j.close();
        }
    }
}
