package io.rpctimer.bench;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler;

/**
 * The benchmark charts' common ground (XChart): bar charts in one style, laid out two per row in one PNG.
 * Sizes are in pixels.
 *
 * <p><b>Threading:</b> stateless; call from one thread (AWT rendering, headless).
 */
public final class ChartGrid {

    private ChartGrid() {
    }

    /** @return an empty bar chart: legend below in one row, values on the bars, white background */
    public static CategoryChart newChart(String title, String yTitle, int width, int height) {
        CategoryChart chart = new CategoryChartBuilder().width(width).height(height).title(title).yAxisTitle(yTitle)
                .build();
        CategoryStyler st = chart.getStyler();
        st.setLegendPosition(Styler.LegendPosition.OutsideS);
        st.setLegendLayout(Styler.LegendLayout.Horizontal);
        st.setLabelsVisible(true);
        st.setChartBackgroundColor(Color.WHITE);
        return chart;
    }

    /** Draws {@code charts}, each {@code width} × {@code height}, two per row, into the PNG file {@code png}. */
    public static void write(List<CategoryChart> charts, int width, int height, Path png) throws IOException {
        int rows = (charts.size() + 1) / 2;
        BufferedImage grid = new BufferedImage(2 * width, rows * height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = grid.createGraphics();
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, grid.getWidth(), grid.getHeight());
        for (int i = 0; i < charts.size(); i++) {
            g.drawImage(BitmapEncoder.getBufferedImage(charts.get(i)), (i % 2) * width, (i / 2) * height, null);
        }
        g.dispose();
        ImageIO.write(grid, "png", png.toFile());
    }
}
