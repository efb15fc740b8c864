package io.rpctimer.journal;

import java.util.regex.Pattern;

/**
 * JDBC URLs as they may be shown: in a log line, an exception, an operator's view. A URL may carry a password
 * ({@code jdbc:postgresql://db/app?user=app&password=s3cret}, {@code jdbc:h2:file:/x;PASSWORD=s3cret},
 * {@code jdbc:mysql://app:s3cret@db/app}); {@link #redact} hides its value.
 *
 * <p><b>Threading:</b> stateless.
 */
public final class JdbcUrls {

    /** A parameter whose name says it holds a secret, in query ({@code ?&}) or property ({@code ;}) form. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)([?&;:](?:password|passwd|pwd|secret|token|sslpassword|[a-z0-9_.-]*password)=)[^&;]*");
    /** The password of a {@code user:password@host} authority. */
    private static final Pattern USER_INFO = Pattern.compile("(//[^/:@?;]*:)[^@/?;]*@");

    private JdbcUrls() {
    }

    /** @return {@code url} with the value of every secret replaced by {@code ***}; null stays null */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String out = SECRET_PARAMETER.matcher(url).replaceAll("$1***");
        return USER_INFO.matcher(out).replaceAll("$1***@");
    }

    /** @return true if {@code url} carries a secret that {@link #redact} would hide */
    public static boolean hasSecret(String url) {
        return url != null && !redact(url).equals(url);
    }
}
